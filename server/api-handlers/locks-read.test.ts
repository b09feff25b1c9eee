import { describe, expect, it } from 'vitest';
import type { LockDetail, LocksPage } from '../../lib/ops-api/api-types.ts';
import { apiRequest, EPOCH_BASE, READ_TOKEN, testFacade } from '../console-services/testing/test-facade.ts';
import { getLock, listLocks } from './locks-read.ts';

async function page(t: Awaited<ReturnType<typeof testFacade>>, query: string): Promise<LocksPage> {
  const res = listLocks(apiRequest(`/api/v1/locks${query}`), t.daemon);
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
    const res = listLocks(apiRequest('/api/v1/locks?limit=0'), daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringMatching(/^invalid input: limit: /) } });
  });

  it('refuses a limit that is not a whole number', async () => {
    const { daemon } = await testFacade();
    for (const limit of ['abc', '1.5', '1001', '']) expect(listLocks(apiRequest(`/api/v1/locks?limit=${limit}`), daemon).status).toBe(422);
  });

  it('needs a token when reads are closed', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect(listLocks(apiRequest('/api/v1/locks'), daemon).status).toBe(401);
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
