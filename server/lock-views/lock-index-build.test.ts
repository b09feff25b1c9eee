// The sliced build of the lock index (lock-index.ts): a table larger than a slice is indexed
// over loop turns, and locks that come and go between the turns are settled afterwards.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { LockIndex } from './lock-index.ts';
import { locksPage, lockSummary } from './lock-views.ts';

const EPOCH = 1_700_000_000_000;
type Fixture = ReturnType<typeof engineFixture>;
const viewClock = (f: Fixture) => ({ now: () => f.clock.now(), wall: (t: number) => EPOCH + t });
const liveNames = (engine: LockEngine): string[] => [...engine.allLocks()].map((l) => l.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** GET /api/v1/locks as specified: every name sorted, filtered, sliced. */
function naivePage(f: Fixture, prefix: string, cursor: string | null, limit: number) {
  const clock = viewClock(f);
  const names = liveNames(f.engine).filter((n) => n.startsWith(prefix) && (cursor === null || n > cursor));
  const page = names.slice(0, limit);
  return {
    asOf: Math.round(clock.wall(clock.now())),
    locks: page.map((n) => lockSummary(f.engine.lock(n) as NonNullable<ReturnType<LockEngine['lock']>>, clock)),
    nextCursor: names.length > limit ? (page.at(-1) ?? null) : null,
  };
}

/** The engine with its table reads counted: scans, and names read since the last mark. */
function counting(engine: LockEngine) {
  const counts = { scans: 0, read: 0 };
  const wrapped: Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock' | 'lockCount'> = {
    get lockCount() {
      return engine.lockCount;
    },
    subscribe: (l) => engine.subscribe(l),
    lock: (n) => engine.lock(n),
    allLocks: function* () {
      counts.scans++;
      for (const lock of engine.allLocks()) {
        counts.read++;
        yield lock;
      }
    },
  };
  return { wrapped, counts };
}

const nameArb = fc.oneof(
  fc.constantFrom('a', 'a/b', 'jobs/1', 'jobs/10', 'é', 'z'),
  fc.integer({ min: 0, max: 60 }).map((i) => `k/${i}`),
);
type Change = { op: 'acquire'; name: string } | { op: 'release'; pick: number } | { op: 'reset' };
const changeArb: fc.Arbitrary<Change> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('acquire' as const), name: nameArb }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reset' as const }) },
);

function apply(f: Fixture, owner: Owner, claims: Claim[], change: Change): void {
  if (change.op === 'acquire') claims.push(f.fixed(change.name, owner));
  else if (change.op === 'reset') {
    f.engine.reset();
    claims.length = 0;
  } else {
    const claim = claims.splice(change.pick % Math.max(1, claims.length), 1)[0];
    if (claim?.state === 'holding') f.engine.release(claim.lock.name, claim.token);
    else if (claim?.state === 'waiting') f.engine.kick(claim.lock.name, claim.id);
  }
}

describe('the lock index built over loop turns', () => {
  it('gives exactly the pages of a sort of the final table when locks come, go and reset between slices', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(nameArb, { minLength: 1, maxLength: 80 }),
        fc.array(fc.array(changeArb, { maxLength: 6 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('', 'k/', 'k/1', 'jobs/', 'zz'),
        async (initial, turns, slice, prefix) => {
          const f = engineFixture({ blockSize: 1_000n });
          const owner = new Owner();
          const claims = initial.map((n) => f.fixed(n, owner));
          let turn = 0;
          const index = new LockIndex(f.engine, {
            sliceNames: slice,
            nextTurn: async () => {
              for (const change of turns[turn++] ?? []) apply(f, owner, claims, change);
            },
          });
          const clock = viewClock(f);
          // Page through the whole prefix: the first page waits for the build, later ones settle what changed.
          let cursor: string | null = null;
          for (let n = 0; n < 200; n++) {
            const page = await locksPage(f.engine, index, clock, { prefix, cursor, limit: 3 });
            expect(page).toEqual(naivePage(f, prefix, cursor, 3));
            if (page.nextCursor === null) break;
            cursor = page.nextCursor;
          }
          expect((await index.current()).toArray()).toEqual(liveNames(f.engine));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('handles at most a slice of names in any loop turn: reading the table, sorting, merging and settling', async () => {
    const f = engineFixture({ blockSize: 100_000n });
    const owner = new Owner();
    for (let i = 0; i < 5_000; i++) f.fixed(`lock/${(i * 7_919) % 5_000}`, owner);
    const { wrapped, counts } = counting(f.engine);
    const slices: number[] = [];
    const readPerTurn: number[] = [];
    let turns = 0;
    const index = new LockIndex(wrapped, {
      sliceNames: 256,
      onSlice: (n) => slices.push(n),
      nextTurn: async () => {
        readPerTurn.push(counts.read);
        counts.read = 0;
        // 1,000 new locks during the build: settled afterwards, a slice per turn too.
        if (turns++ === 3) for (let i = 0; i < 1_000; i++) f.fixed(`late/${i}`, owner);
      },
    });
    const names = await index.current();
    expect(names.toArray()).toEqual(liveNames(f.engine));
    expect(Math.max(...slices)).toBeLessThanOrEqual(256);
    expect(Math.max(...readPerTurn, counts.read)).toBeLessThanOrEqual(256);
    // 5,000 names read and sorted in chunks, merged, then 1,000 settled: every name went through a slice.
    expect(slices.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2 * 5_000 + 1_000 - 256);
    expect(turns).toBeGreaterThanOrEqual(Math.floor((2 * 5_000 + 1_000) / 256) - 2);
  });

  it("builds a table of at most a slice in the request's own turn, as before", async () => {
    const f = engineFixture({ blockSize: 1_000n });
    const owner = new Owner();
    for (const n of ['c', 'a', 'b']) f.fixed(n, owner);
    let turns = 0;
    const index = new LockIndex(f.engine, { sliceNames: 3, nextTurn: async () => void turns++ });
    const pending = index.current();
    expect(index.warm).toBe(true);
    expect((await pending).toArray()).toEqual(['a', 'b', 'c']);
    expect(turns).toBe(0);
  });

  it('shares one build between requests that arrive while it runs', async () => {
    const f = engineFixture({ blockSize: 100_000n });
    const owner = new Owner();
    for (let i = 0; i < 3_000; i++) f.fixed(`lock/${i}`, owner);
    const { wrapped, counts } = counting(f.engine);
    const index = new LockIndex(wrapped, { sliceNames: 100 });
    const clock = viewClock(f);
    const query = { prefix: 'lock/', cursor: null, limit: 5 };
    const first = locksPage(wrapped, index, clock, query);
    expect(index.warm).toBe(false);
    const second = locksPage(wrapped, index, clock, { ...query, cursor: 'lock/1' });
    const [a, b] = await Promise.all([first, second]);
    expect(counts.scans).toBe(1);
    expect(a).toEqual(naivePage(f, 'lock/', null, 5));
    expect(b).toEqual(naivePage(f, 'lock/', 'lock/1', 5));
    expect(index.warm).toBe(true);
  });

  it('walks the table again when it is reset during the build, and answers for the new table', async () => {
    const f = engineFixture({ blockSize: 100_000n });
    const owner = new Owner();
    for (let i = 0; i < 2_000; i++) f.fixed(`old/${i}`, owner);
    const { wrapped, counts } = counting(f.engine);
    let turns = 0;
    const index = new LockIndex(wrapped, {
      sliceNames: 100,
      nextTurn: async () => {
        if (turns++ !== 5) return;
        f.engine.reset();
        for (let i = 0; i < 500; i++) f.fixed(`new/${i}`, owner);
      },
    });
    const names = await index.current();
    expect(names.toArray()).toEqual(liveNames(f.engine));
    expect(names.toArray().every((n) => n.startsWith('new/'))).toBe(true);
    expect(counts.scans).toBe(2);
  });

  it('fails a request waiting for a build when the index is closed, lets go of the engine, and builds afresh for the next', async () => {
    const f = engineFixture({ blockSize: 100_000n });
    const owner = new Owner();
    for (let i = 0; i < 1_000; i++) f.fixed(`lock/${i}`, owner);
    const index = new LockIndex(f.engine, { sliceNames: 100 });
    const waiting = index.current();
    index.close();
    await expect(waiting).rejects.toThrow(/closed while it was being built/);
    expect(f.engine.listenerCount).toBe(0);
    // A request after the close builds afresh.
    const again = index.current();
    index.close();
    const fresh = index.current();
    await expect(again).rejects.toThrow(/closed while it was being built/);
    expect((await fresh).size).toBe(1_000);
    expect(f.engine.listenerCount).toBe(1);
  });
});
