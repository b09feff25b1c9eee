import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { LockIndex, MAX_PENDING } from './lock-index.ts';
import { locksPage, lockSummary } from './lock-views.ts';

const EPOCH = 1_700_000_000_000;

/** GET /api/v1/locks as it was specified: filter, sort every name, slice. */
function naivePage(engine: LockEngine, clock: { now(): number; wall(t: number): number }, prefix: string, cursor: string | null, limit: number) {
  const names = [...engine.allLocks()].map((l) => l.name).filter((n) => n.startsWith(prefix) && (cursor === null || n > cursor));
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const page = names.slice(0, limit);
  return {
    asOf: Math.round(clock.wall(clock.now())),
    locks: page.map((n) => lockSummary(engine.lock(n) as NonNullable<ReturnType<LockEngine['lock']>>, clock)),
    nextCursor: names.length > limit ? (page.at(-1) ?? null) : null,
  };
}

/** Counts full scans of the table: what a page must not need once the index is warm. */
function counting(engine: LockEngine) {
  const counts = { scans: 0 };
  const wrapped: Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock' | 'lockCount'> = {
    get lockCount() {
      return engine.lockCount;
    },
    subscribe: (l) => engine.subscribe(l),
    lock: (n) => engine.lock(n),
    allLocks: () => {
      counts.scans++;
      return engine.allLocks();
    },
  };
  return { wrapped, counts };
}

const nameArb = fc.oneof(
  fc.constantFrom('a', 'a/b', 'ab', 'b', 'jobs/1', 'jobs/2', 'jobs/10', 'é', 'z'),
  fc.integer({ min: 0, max: 40 }).map((i) => `k/${i}`),
);
type Step =
  | { op: 'acquire'; name: string }
  | { op: 'release'; pick: number }
  | { op: 'page'; prefix: string; cursor: string | null; limit: number }
  | { op: 'reset' };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('acquire' as const), name: nameArb }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('page' as const),
      prefix: fc.constantFrom('', 'a', 'jobs/', 'k/', 'k/1', 'zz'),
      cursor: fc.option(nameArb, { nil: null }),
      limit: fc.integer({ min: 1, max: 12 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'reset' as const }) },
);

describe('GET /api/v1/locks from the sorted index', () => {
  it('answers every page exactly as sorting every name would, under any interleaving of grants, releases, queues and resets', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 200 }), async (steps) => {
        const f = engineFixture({ blockSize: 1_000n });
        const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
        const owner = new Owner();
        const claims: Claim[] = [];
        const index = new LockIndex(f.engine);
        for (const step of steps) {
          if (step.op === 'acquire') claims.push(f.fixed(step.name, owner));
          else if (step.op === 'release') {
            const claim = claims.splice(step.pick % Math.max(1, claims.length), 1)[0];
            if (claim !== undefined && claim.state === 'holding') f.engine.release(claim.lock.name, claim.token);
            else if (claim !== undefined && claim.state === 'waiting') f.engine.kick(claim.lock.name, claim.id);
          } else if (step.op === 'reset') {
            f.engine.reset();
            claims.length = 0;
          } else {
            const query = { prefix: step.prefix, cursor: step.cursor, limit: step.limit };
            expect(await locksPage(f.engine, index, clock, query)).toEqual(naivePage(f.engine, clock, step.prefix, step.cursor, step.limit));
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('walks every lock once in pages while locks come and go, and never reads the whole table again once built', async () => {
    const f = engineFixture({ blockSize: 100_000n });
    const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
    const owner = new Owner();
    for (let i = 0; i < 5_000; i++) f.fixed(`lock/${i}`, owner);
    const { wrapped, counts } = counting(f.engine);
    const index = new LockIndex(wrapped);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; ; page++) {
      const res = await locksPage(wrapped, index, clock, { prefix: 'lock/', cursor, limit: 1 });
      seen.push(...res.locks.map((l) => l.name));
      // Churn between pages on names outside the prefix: the index settles them, no rescan.
      const extra = f.fixed(`other/${page}`, owner);
      if (page % 2 === 0) f.engine.release(extra.lock.name, extra.token);
      if (res.nextCursor === null) break;
      cursor = res.nextCursor;
    }
    expect(seen).toHaveLength(5_000);
    expect(new Set(seen).size).toBe(5_000);
    expect(counts.scans).toBe(1);
  });

  it('lets go of the engine once more names changed than it keeps unread, and rebuilds on the next page', async () => {
    const f = engineFixture({ blockSize: 1_000_000n });
    const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
    const owner = new Owner();
    f.fixed('first', owner);
    const { wrapped, counts } = counting(f.engine);
    const index = new LockIndex(wrapped);
    expect((await index.current()).toArray()).toEqual(['first']);
    for (let i = 0; i <= MAX_PENDING; i++) f.fixed(`burst/${i}`, owner);
    expect(index.warm).toBe(false);
    await Promise.resolve(); // the listener goes after the engine's event (a microtask)
    expect(f.engine.listenerCount).toBe(0);
    expect((await index.current()).size).toBe(MAX_PENDING + 2);
    expect(counts.scans).toBe(2);
    expect((await locksPage(f.engine, new LockIndex(f.engine), clock, { prefix: 'burst/', cursor: null, limit: 2 })).locks.map((l) => l.name)).toEqual([
      'burst/0',
      'burst/1',
    ]);
  });
});
