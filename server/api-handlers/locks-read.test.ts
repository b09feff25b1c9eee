import { describe, expect, it } from 'vitest';
import type { LockDetail, LocksPage } from '../../lib/ops-api/api-types.ts';
import { apiRequest, EPOCH_BASE, READ_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getLock, listLocks } from './locks-read.ts';

async function page(t: Awaited<ReturnType<typeof testFacade>>, query: string): Promise<LocksPage> {
  const res = await listLocks(apiRequest(`/api/v1/locks${query}`), t.daemon);
  expect(res.status).toBe(200);
  return (await res.json()) as LocksPage;
}

describe('GET /api/v1/locks', () => {
  it('walks all locks in two pages with no repeats', async () => {
    const t = await testFacade();
    for (const name of ['e', 'a', 'd', 'b', 'c']) t.hold(name);
    const first = await page(t, '?limit=3');
    expect(first.locks.map((l) => l.name)).toEqual(['a', 'b', 'c']);
    expect(first.nextCursor).toBe('c');
    const second = await page(t, `?limit=3&cursor=${first.nextCursor}`);
    expect(second.locks.map((l) => l.name)).toEqual(['d', 'e']);
    expect(second.nextCursor).toBeNull();
  });

  it('keeps only names with the prefix', async () => {
    const t = await testFacade();
    for (const name of ['jobs/1', 'jobs/2', 'mail/1']) t.hold(name);
    expect((await page(t, '?prefix=jobs%2F')).locks.map((l) => l.name)).toEqual(['jobs/1', 'jobs/2']);
  });

  it('shows each holder and queue length with epoch times', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    t.hold('a');
    const { locks, asOf } = await page(t, '');
    expect(asOf).toBe(EPOCH_BASE + t.clock.now());
    expect(locks).toEqual([
      {
        name: 'a',
        queueLength: 1,
        holder: expect.objectContaining({ token: holder.token.toString(), client: '127.0.0.1:5000', protocol: 'keyed', grantedAt: EPOCH_BASE + 1_000 }),
      },
    ]);
  });

  it('returns 100 locks by default', async () => {
    const t = await testFacade();
    for (let i = 0; i < 150; i++) t.hold(`lock-${String(i).padStart(3, '0')}`);
    const first = await page(t, '');
    expect(first.locks).toHaveLength(100);
    expect(first.nextCursor).toBe('lock-099');
  });

  it('refuses a limit of 0 with 422 naming the field', async () => {
    const { daemon } = await testFacade();
    const res = await listLocks(apiRequest('/api/v1/locks?limit=0'), daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringMatching(/^invalid input: limit: /) } });
  });

  it('refuses a limit that is not a whole number', async () => {
    const { daemon } = await testFacade();
    for (const limit of ['abc', '1.5', '1001', '']) expect((await listLocks(apiRequest(`/api/v1/locks?limit=${limit}`), daemon)).status).toBe(422);
  });

  it('needs a token when reads are closed', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect((await listLocks(apiRequest('/api/v1/locks'), daemon)).status).toBe(401);
  });
});

describe('GET /api/v1/locks/{name}', () => {
  it('lists the queue in FIFO order with positions and claim ids', async () => {
    const t = await testFacade();
    t.hold('a');
    const waiters = [t.hold('a'), t.hold('a', undefined, 30_000, 5_000), t.hold('a')];
    const res = getLock(apiRequest('/api/v1/locks/a'), t.daemon, { name: 'a' });
    expect(res.status).toBe(200);
    const detail = (await res.json()) as LockDetail;
    expect(detail.queue.map((w) => [w.id, w.position])).toEqual(waiters.map((w, i) => [String(w.id), i + 1]));
    expect(detail.queue[1]?.waitDeadline).toBe(EPOCH_BASE + 1_000 + 5_000);
    expect(detail.queue[0]?.waitDeadline).toBeNull();
  });

  it('answers 404 when nobody holds or waits for the lock', async () => {
    const { daemon } = await testFacade();
    const res = getLock(apiRequest('/api/v1/locks/nobody'), daemon, { name: 'nobody' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not-found' } });
  });

  it('answers 404 once the last holder has gone', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    t.engine.release('a', holder.token);
    expect(getLock(apiRequest('/api/v1/locks/a'), t.daemon, { name: 'a' }).status).toBe(404);
  });

  it('refuses a name no client could hold with 422', async () => {
    const { daemon } = await testFacade();
    for (const name of ['has space', '', 'x'.repeat(251), 'tab\there']) {
      const res = getLock(apiRequest('/api/v1/locks/bad'), daemon, { name });
      expect(res.status).toBe(422);
    }
  });

  it('takes a name with a slash and non-ASCII letters', async () => {
    const t = await testFacade();
    t.hold('jobs/übung');
    expect(getLock(apiRequest('/api/v1/locks/jobs%2F%C3%BCbung'), t.daemon, { name: 'jobs/übung' }).status).toBe(200);
  });
});

describe('GET /api/v1/locks/{name}: the queue in pages', () => {
  async function detail(t: Awaited<ReturnType<typeof testFacade>>, query: string): Promise<LockDetail> {
    const res = getLock(apiRequest(`/api/v1/locks/q${query}`), t.daemon, { name: 'q' });
    expect(res.status).toBe(200);
    return (await res.json()) as LockDetail;
  }

  it('answers the first 100 of 50,000 waiters by default, with the queue length and a cursor', async () => {
    const t = await testFacade();
    t.hold('q');
    const waiters = Array.from({ length: 50_000 }, () => t.hold('q'));
    const res = getLock(apiRequest('/api/v1/locks/q'), t.daemon, { name: 'q' });
    // The whole queue was 9 MB of JSON: a page of 100 waiters is about 20 KB.
    expect((await res.clone().text()).length).toBeLessThan(40_000);
    const page = (await res.json()) as LockDetail;
    expect([page.queueLength, page.queue.length, page.nextCursor]).toEqual([50_000, 100, String(waiters[99]?.id)]);
    expect(page.queue.map((w) => w.position)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('walks the queue page by page with after, positions going on and no waiter twice', async () => {
    const t = await testFacade();
    t.hold('q');
    const waiters = Array.from({ length: 25 }, () => t.hold('q'));
    const seen: string[] = [];
    const positions: number[] = [];
    let after = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await detail(t, `?limit=10&after=${after}`);
      seen.push(...page.queue.map((w) => w.id));
      positions.push(...page.queue.map((w) => w.position));
      if (page.nextCursor === null) break;
      after = page.nextCursor;
    }
    expect(seen).toEqual(waiters.map((w) => String(w.id)));
    expect(positions).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  });

  it('keeps paging from the cursor while waiters ahead of it leave', async () => {
    const t = await testFacade();
    t.hold('q');
    const waiters = Array.from({ length: 6 }, () => t.hold('q'));
    const first = await detail(t, '?limit=3');
    t.engine.kick('q', waiters[0]?.id as number);
    const second = await detail(t, `?limit=3&after=${first.nextCursor}`);
    expect(second.queue.map((w) => [w.id, w.position])).toEqual(waiters.slice(3).map((w, i) => [String(w.id), i + 3]));
    expect(second.nextCursor).toBeNull();
  });

  it('answers 404 naming the cursor when its waiter has left the queue', async () => {
    const t = await testFacade();
    t.hold('q');
    const waiters = [t.hold('q'), t.hold('q')];
    t.engine.kick('q', waiters[0]?.id as number);
    const res = getLock(apiRequest(`/api/v1/locks/q?after=${waiters[0]?.id}`), t.daemon, { name: 'q' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not-found', message: expect.stringContaining(`after: waiter ${waiters[0]?.id} is no longer`) } });
  });

  it('refuses bad paging with 422 invalid-input naming the field', async () => {
    const t = await testFacade();
    t.hold('q');
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?after=x', 'after'],
      ['?after=0', 'after'],
      ['?after=-3', 'after'],
      ['?after=99999999999999999', 'after'],
      ['?afer=3', 'query'],
    ]) {
      const res = getLock(apiRequest(`/api/v1/locks/q${query}`), t.daemon, { name: 'q' });
      expect(res.status, query).toBe(422);
      expect(await res.json(), query).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining(`${field}`) } });
    }
  });
});
