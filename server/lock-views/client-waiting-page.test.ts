// GET /api/v1/clients/waiting in pages (client-waiting-page.ts) and the waiter search
// (waiter-search.ts) on a real engine: bounded pages that together list every waiter of the
// client once, in name order; a search bounded by its scan.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClientMatch } from '../../lib/ops-api/admin-request.ts';
import { Owner, engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { clientWaitingPage } from './client-waiting-page.ts';
import { ContentionTracker } from './contention-tracker.ts';
import { LockIndex } from './lock-index.ts';
import { searchWaiters } from './waiter-search.ts';

const clock = (f: ReturnType<typeof engineFixture>) => ({ now: () => f.clock.now(), wall: (ms: number) => ms });
const ME = { by: 'identity', value: 'me' } as ClientMatch;

/** Locks l/000.., each held by someone, with `mine[i]` waiters of "me" and one other waiter. */
function table(mine: number[]) {
  const f = engineFixture();
  const queue = (name: string, clientName: string) =>
    f.engine.acquire({ name, owner: new Owner(), protocol: 'keyed', client: '127.0.0.1:1', clientName, leaseMs: 60_000, waitMs: 0, sliding: false });
  mine.forEach((n, i) => {
    const name = `l/${String(i).padStart(3, '0')}`;
    queue(name, 'holder');
    queue(name, 'other');
    for (let k = 0; k < n; k++) queue(name, 'me');
  });
  return f;
}

describe("one client's waiters in pages", () => {
  it('lists every waiter of the client once, in name order, whatever the page size and scan bounds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        async (mine, limit, names, waiters) => {
          const f = table(mine);
          const index = new LockIndex(f.engine);
          const seen: string[] = [];
          let after: string | null = null;
          for (let pages = 0; ; pages++) {
            expect(pages).toBeLessThan(200);
            const page = await clientWaitingPage(f.engine, index, clock(f), ME, { limit, after }, { names, waiters });
            // A page stops at a lock's boundary: at most `limit` plus the rest of one lock's waiters.
            expect(page.waiting.length).toBeLessThan(limit + 2);
            seen.push(...page.waiting.map((w) => `${w.name}#${w.position}`));
            if (page.nextCursor === null) break;
            after = page.nextCursor;
          }
          const expected = mine.flatMap((n, i) => Array.from({ length: n }, (_, k) => `l/${String(i).padStart(3, '0')}#${k + 2}`));
          expect(seen).toEqual(expected);
          index.close();
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('the waiter search', () => {
  it('stops at its scan bound and says so', () => {
    const f = table([1, 1, 1, 1]);
    const tracker = new ContentionTracker(f.engine, clock(f));
    expect(searchWaiters(tracker, clock(f), 'ME', 100).locks).toHaveLength(4);
    // Each lock has two waiters, "other" first: four waiters looked at reach two locks.
    const bounded = searchWaiters(tracker, clock(f), 'me', 100, 4);
    expect([bounded.locks.length, bounded.truncated]).toEqual([2, true]);
    expect(searchWaiters(tracker, clock(f), '  ', 100)).toMatchObject({ locks: [], truncated: false });
  });
});
