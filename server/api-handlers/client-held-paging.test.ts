// GET /api/v1/clients/held in pages (server/admin-ops/client-held-page.ts): a page builds
// at most `limit` entries and looks at a bounded stretch of the table, and the pages together
// list every lock the client holds, once, in name order.
import { describe, expect, it } from 'vitest';
import type { ClientHeldView } from '../../lib/ops-api/client-release-types.ts';
import { HELD_SCAN_NAMES } from '../admin-ops/client-held-page.ts';
import { apiRequest, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getClientHeld } from './client-actions.ts';

const WORKER = 'worker-7@host-3 pid 4121';
type Facade = Awaited<ReturnType<typeof testFacade>>;

async function page(t: Facade, query: string): Promise<ClientHeldView> {
  const res = await getClientHeld(apiRequest(`/api/v1/clients/held?identity=${encodeURIComponent(WORKER)}${query}`), t.daemon);
  expect(res.status).toBe(200);
  return (await res.json()) as ClientHeldView;
}

/** Every page from the first, following nextCursor; the pages' entry counts too. */
async function allPages(t: Facade, limit: number): Promise<{ names: string[]; sizes: number[] }> {
  const names: string[] = [];
  const sizes: number[] = [];
  let after = '';
  for (let n = 0; n < 1_000; n++) {
    const p = await page(t, `&limit=${limit}&after=${encodeURIComponent(after)}`);
    names.push(...p.held.map((h) => h.name));
    sizes.push(p.held.length);
    expect(p.truncated).toBe(p.nextCursor !== null);
    if (p.nextCursor === null) return { names, sizes };
    after = p.nextCursor;
  }
  throw new Error('the pages never ended');
}

const lockName = (i: number) => `held/${String(i).padStart(6, '0')}`;

describe('GET /api/v1/clients/held: pages', () => {
  it('answers the first 100 of 20,000 held locks by default, with a cursor', async () => {
    const t = await testFacade();
    for (let i = 0; i < 20_000; i++) t.holdAs(lockName(i), '127.0.0.1:6001', WORKER);
    const res = await getClientHeld(apiRequest(`/api/v1/clients/held?identity=${encodeURIComponent(WORKER)}`), t.daemon);
    // The whole list was 10,000 entries (1.5 MB) per read: a page of 100 is about 20 KB.
    expect((await res.clone().text()).length).toBeLessThan(40_000);
    const first = (await res.json()) as ClientHeldView;
    expect([first.held.length, first.held[0]?.name, first.nextCursor, first.truncated]).toEqual([100, lockName(0), lockName(99), true]);
  });

  it('lists every lock of the client once, in name order, over pages of limit', async () => {
    const t = await testFacade();
    const mine: string[] = [];
    for (let i = 0; i < 2_500; i++) {
      if (i % 3 === 0) mine.push(lockName(i));
      t.holdAs(lockName(i), '127.0.0.1:6001', i % 3 === 0 ? WORKER : 'someone else');
    }
    const { names, sizes } = await allPages(t, 300);
    expect(names).toEqual(mine);
    expect(Math.max(...sizes)).toBe(300);
  });

  it(`looks at ${HELD_SCAN_NAMES} names per page at most: a sparse client's pages are short, the last one has no cursor`, async () => {
    const t = await testFacade();
    // 25,000 locks, the client's every 5,000th: each page looks at one stretch of 10,000 names.
    for (let i = 0; i < 25_000; i++) t.holdAs(lockName(i), '127.0.0.1:6001', i % 5_000 === 4_999 ? WORKER : 'someone else');
    const first = await page(t, '&limit=1000');
    expect([first.held.map((h) => h.name), first.nextCursor]).toEqual([[lockName(4_999), lockName(9_999)], lockName(9_999)]);
    const { names, sizes } = await allPages(t, 1000);
    expect(names).toEqual([4_999, 9_999, 14_999, 19_999, 24_999].map(lockName));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('goes on after a cursor whose lock has been released meanwhile', async () => {
    const t = await testFacade();
    const claims = ['a', 'b', 'c', 'd'].map((n) => t.holdAs(n, '127.0.0.1:6001', WORKER));
    const first = await page(t, '&limit=2');
    expect(first.nextCursor).toBe('b');
    t.engine.release('b', (claims[1] as (typeof claims)[number]).token);
    expect((await page(t, '&limit=2&after=b')).held.map((h) => h.name)).toEqual(['c', 'd']);
  });

  it('refuses bad paging with 422 invalid-input naming the field', async () => {
    const t = await testFacade();
    const cases: [string, string][] = [
      ['&limit=0', 'limit'],
      ['&limit=1001', 'limit'],
      ['&limit=1.5', 'limit'],
      ['&after=has%20space', 'after'],
      [`&after=${'x'.repeat(251)}`, 'after'],
      ['&cursor=a', 'query'],
    ];
    for (const [query, field] of cases) {
      const res = await getClientHeld(apiRequest(`/api/v1/clients/held?identity=${encodeURIComponent(WORKER)}${query}`), t.daemon);
      expect(res.status, query).toBe(422);
      expect(await res.json(), query).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining(field) } });
    }
  });
});
