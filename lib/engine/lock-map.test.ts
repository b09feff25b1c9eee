// The lock table's map (lock-map.ts): one Map or 2^k shards, it answers as a Map would, and its
// iteration keeps what the snapshot walk relies on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BYPASS_ROUNDS, LOCKS_PER_SHARD, LockMap, MAX_SHARDS, SHARD_FROM, SPLIT_AT, shardsFor } from './lock-map.ts';
import { LockTable } from './lock-table.ts';
import type { ClaimOwner } from './claim.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

describe('shardsFor', () => {
  it('keeps a table expected small in one Map, and splits a large one into shards of at most LOCKS_PER_SHARD', () => {
    expect(shardsFor(0)).toBe(1);
    expect(shardsFor(SHARD_FROM - 1)).toBe(1);
    expect(shardsFor(Number.NaN)).toBe(1);
    expect(shardsFor(SHARD_FROM)).toBe(SHARD_FROM / LOCKS_PER_SHARD);
    expect(shardsFor(5_000_000)).toBe(256);
    expect(shardsFor(1e12)).toBe(MAX_SHARDS);
  });
});

type Op = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string } | { kind: 'clear'; expected: number };
const key = fc.oneof(fc.constantFrom('a', 'b', 'lock/1', 'lock/2'), fc.string({ maxLength: 40 }));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), key, value: fc.integer() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), key }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const), expected: fc.constantFrom(0, SHARD_FROM, 5_000_000) }) },
);

/** Applies a set, delete or clear to the map and to its model Map alike (a delete's answers must agree). */
function applyOp(m: LockMap<number>, model: Map<string, number>, op: Op): void {
  if (op.kind === 'set') {
    m.set(op.key, op.value);
    model.set(op.key, op.value);
  } else if (op.kind === 'delete') expect(m.delete(op.key)).toBe(model.delete(op.key));
  else {
    m.clear(op.expected);
    model.clear();
  }
}

describe('LockMap', () => {
  it('answers get, size and values as a Map does, split or not', () => {
    fc.assert(
      fc.property(fc.constantFrom(0, SHARD_FROM, 5_000_000), fc.constantFrom(SPLIT_AT, 8), fc.array(opArb, { maxLength: 200 }), (expected, splitAt, ops) => {
        // splitAt 8: the table splits as it grows, with locks in the first Map and in shards.
        const m = new LockMap<number>(splitAt);
        m.clear(expected);
        const model = new Map<string, number>();
        for (const op of ops) {
          applyOp(m, model, op);
          if (op.kind === 'clear') expect(m.shardCount).toBe(shardsFor(op.expected));
          expect(m.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(m.get(k)).toBe(v);
        expect([...m.values()].sort()).toEqual([...model.values()].sort());
      }),
      { numRuns: 300 },
    );
  });

  it('answers every lookup as a Map does with its hot cache in front: gets between sets, deletes, splits and clears', () => {
    type HotOp = Op | { kind: 'get'; key: string };
    // Twelve names mostly: each is found, changed, deleted and filed again many times in a run.
    const hotKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `k${i}`)) }, { weight: 1, arbitrary: key });
    const hotOp: fc.Arbitrary<HotOp> = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('get' as const), key: hotKey }) },
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), key: hotKey, value: fc.integer() }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: hotKey }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const), expected: fc.constantFrom(0, SHARD_FROM) }) },
    );
    fc.assert(
      fc.property(
        fc.constantFrom(0, SHARD_FROM),
        fc.constantFrom(4, 8, SPLIT_AT),
        fc.constantFrom(1, 3, 16),
        // size max: fast-check otherwise makes arrays of about ten, too few to split and then reuse a name.
        fc.array(hotOp, { maxLength: 300, size: 'max' }),
        (expected, splitAt, hotMax, ops) => {
          // A cache of 1 to 16 names: it fills and is emptied many times in one run.
          const m = new LockMap<number>(splitAt, hotMax);
          m.clear(expected);
          const model = new Map<string, number>();
          for (const op of ops) {
            if (op.kind === 'get') {
              // Twice: the first may fill the cache, the second is then answered from it.
              expect(m.get(op.key)).toBe(model.get(op.key));
              expect(m.get(op.key)).toBe(model.get(op.key));
            } else applyOp(m, model, op);
            expect(m.size).toBe(model.size);
            expect(m.hotSize).toBeLessThanOrEqual(m.shardCount > 1 ? hotMax : 0);
          }
          for (const [k, v] of model) expect(m.get(k)).toBe(v);
          expect([...m.values()].sort()).toEqual([...model.values()].sort());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a split table answers a name found lately from its hot cache, and a value changed or deleted since from the shards', () => {
    const m = new LockMap<number>(4, 2);
    for (let i = 0; i < 10; i++) m.set(`k${i}`, i);
    expect(m.shardCount).toBe(256);
    // Fresh strings, as the protocol's parser makes them: equal names, not the same objects.
    const name = (i: number) => ['k', String(i)].join('');
    expect(m.get(name(1))).toBe(1);
    expect(m.get(name(7))).toBe(7);
    m.set('k1', 11);
    expect(m.get(name(1))).toBe(11);
    m.delete('k7');
    expect(m.get(name(7))).toBe(undefined);
    // A third name fills the cache of two past full: it is emptied, and answers stay right.
    for (const i of [2, 3, 4, 1]) expect(m.get(name(i))).toBe(i === 1 ? 11 : i);
    m.clear();
    expect(m.get(name(1))).toBe(undefined);
  });

  it('keeps a working set that fits in the hot cache, and reads around it for a while when the names in use do not fit', () => {
    const hotMax = 64;
    const m = new LockMap<number>(8, hotMax);
    for (let i = 0; i < 1_000; i++) m.set(`k${i}`, i);
    const rotate = (names: number, lookups: number) => {
      for (let i = 0; i < lookups; i++) expect(m.get(`k${i % names}`)).toBe(i % names);
    };
    rotate(40, 400);
    expect(m.hotSize, 'forty names in use: all kept').toBe(40);
    // Three times the cache in rotation: every lookup misses it, and within the first round or
    // two it stops taking names, for BYPASS_ROUNDS x its size in lookups.
    rotate(3 * hotMax, 3 * hotMax);
    expect(m.hotSize).toBe(0);
    rotate(3 * hotMax, (BYPASS_ROUNDS - 3) * hotMax);
    expect(m.hotSize, 'still read around').toBe(0);
    // Then tried again: a working set that fits is kept once more.
    rotate(40, 3 * hotMax + 400);
    expect(m.hotSize).toBe(40);
    // Names found once and then deleted (locks taken, given back and unfiled): the cache never
    // fills, but it served no hit for the names it took, so it is read around just the same.
    for (let i = 0; i < 2 * hotMax; i++) {
      const name = `once/${i}`;
      m.set(name, i);
      expect(m.get(name)).toBe(i);
      m.delete(name);
    }
    m.set('once/last', -1);
    expect(m.get('once/last')).toBe(-1);
    expect(m.hotSize, 'not taken: read around').toBe(0);
  });

  it('spreads names over its shards (a 5 M table of numbered names: no shard over twice its share)', () => {
    const m = new LockMap<number>();
    m.clear(5_000_000);
    const names = 200_000;
    for (let i = 0; i < names; i++) m.set(`job/${i}`, i);
    const sizes = m.shardSizes();
    expect(sizes.length).toBe(256);
    expect(Math.max(...sizes)).toBeLessThan((2 * names) / sizes.length);
    expect(Math.min(...sizes)).toBeGreaterThan(names / sizes.length / 2);
  });

  it('iterates live: a name deleted before it is reached is skipped, one added to a shard not reached yet is reached', () => {
    const m = new LockMap<string>();
    m.clear(SHARD_FROM);
    for (let i = 0; i < 64; i++) m.set(`k${i}`, `k${i}`);
    const it = m.values();
    const first = it.next().value as string;
    const seen = new Set([first]);
    // Every other name not yet seen goes, and comes back: deleted then filed again, it is reached (once).
    const again = [...m.values()].filter((n) => n !== first);
    for (const n of again) m.delete(n);
    for (const n of again) m.set(n, n);
    for (let r = it.next(); r.done !== true; r = it.next()) {
      expect(seen.has(r.value), `${r.value} reached twice`).toBe(false);
      seen.add(r.value);
    }
    // The first shard was being read when they came back: its own are reached, the rest too.
    expect(seen.size).toBe(64);
  });

  // (The compact columns are not sized in advance: they grow a page at a time, paged-columns.test.ts.)
  it('a table reset for a large snapshot is split, and one reset for a small table is one Map again', () => {
    const table = new LockTable();
    table.unfileAll(5_000_000);
    expect(table.locks.shardCount).toBe(256);
    for (let i = 0; i < 65; i++) table.compact.hold(table.addCompact(`k${i}`), i + 1, 1n, 0, 1_000, owner, 'c', null);
    table.unfileAll();
    expect(table.locks.shardCount).toBe(1);
    for (let i = 0; i < 65; i++) table.compact.hold(table.addCompact(`k${i}`), i + 1, 1n, 0, 1_000, owner, 'c', null);
    expect(table.compact.capacity, 'columns from 64 rows again').toBe(128);
    expect(table.locks.size).toBe(65);
  });

  it('splits as it grows past its split size, with no lock moved: an iteration under way reaches every lock once', () => {
    const m = new LockMap<string>(16);
    for (let i = 0; i < 10; i++) m.set(`k${i}`, `k${i}`);
    const it = m.values();
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(it.next().value as string);
    // Past 16 the table splits; two locks not reached yet go, and one reached goes and comes back.
    for (let i = 10; i < 40; i++) m.set(`k${i}`, `k${i}`);
    expect(m.shardCount).toBe(256);
    m.delete('k8');
    m.delete('k9');
    m.delete(seen[0] as string);
    m.set(seen[0] as string, seen[0] as string);
    expect(m.get('k5')).toBe('k5');
    expect(m.get('k39')).toBe('k39');
    expect(m.size).toBe(38);
    for (let r = it.next(); r.done !== true; r = it.next()) seen.push(r.value);
    // Every lock there from the start and still there, once; each filed later at most once.
    const counts = new Map<string, number>();
    for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
    for (let i = 0; i < 8; i++) expect(counts.get(`k${i}`), `k${i}`).toBeGreaterThanOrEqual(1);
    for (const [k, n] of counts) expect(n, k).toBeLessThanOrEqual(k === seen[0] ? 2 : 1);
    expect(counts.has('k8') || counts.has('k9')).toBe(false);
    expect(new Set([...m.values()]).size).toBe(38);
  });

  it('a clear ends an iteration under way rather than reading the old table', () => {
    for (const expected of [0, SHARD_FROM]) {
      const m = new LockMap<number>();
      m.clear(expected);
      for (let i = 0; i < 100; i++) m.set(`k${i}`, i);
      const it = m.values();
      it.next();
      m.clear(SHARD_FROM - expected);
      expect(it.next().done).toBe(true);
      expect(m.size).toBe(0);
    }
  });
});
