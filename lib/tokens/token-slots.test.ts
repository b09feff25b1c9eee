// Tokens of two nodes never coincide, whatever each reserved and whatever floors they were told
// of: each node issues only from blocks of its own slot. The property runs several sources side
// by side, as actives on the sides of a partition would, through any mix of grants, floors (a
// heal, a replicated token), promotions and background saves that land late or fail.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCeilingStore } from './file-ceiling-store.ts';
import { DeferredStore } from './testing/deferred-store.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from './token-source.ts';
import { clusterSlot, slotOfToken, slotRangeAbove, TOKEN_SLOTS } from './token-slots.ts';

const drain = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('slotRangeAbove', () => {
  it("gives the rest of the block holding after+1 when it is the slot's, else the slot's next block", () => {
    expect(slotRangeAbove(0n, 100n, { slot: 0, count: 4 })).toEqual({ start: 0n, end: 100n });
    expect(slotRangeAbove(0n, 100n, { slot: 2, count: 4 })).toEqual({ start: 200n, end: 300n });
    expect(slotRangeAbove(250n, 100n, { slot: 2, count: 4 })).toEqual({ start: 250n, end: 300n });
    expect(slotRangeAbove(300n, 100n, { slot: 2, count: 4 })).toEqual({ start: 600n, end: 700n });
    expect(slotRangeAbove(299n, 100n, { slot: 2, count: 4 })).toEqual({ start: 299n, end: 300n });
  });

  it('holds only tokens of the slot, above `after`, and never past u64', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: MAX_TOKEN }),
        fc.bigInt({ min: 1n, max: 1n << 40n }),
        fc.integer({ min: 1, max: TOKEN_SLOTS }).chain((count) => fc.tuple(fc.constant(count), fc.integer({ min: 0, max: count - 1 }))),
        (after, size, [count, slot]) => {
          const range = slotRangeAbove(after, size, { slot, count });
          if (range === null) {
            // Nothing left: no block of the slot starts below the top.
            const next = slotRangeAbove(after, size, { slot, count });
            expect(next).toBeNull();
            return;
          }
          expect(range.start).toBeGreaterThanOrEqual(after);
          expect(range.end).toBeGreaterThan(range.start);
          expect(range.end).toBeLessThanOrEqual(MAX_TOKEN);
          expect(slotOfToken(range.start + 1n, size, count)).toBe(slot);
          expect(slotOfToken(range.end, size, count)).toBe(slot);
          // One block: the first and last token share it.
          expect((range.start + 1n - 1n) / size).toBe((range.end - 1n) / size);
        },
      ),
    );
  });
});

type Op =
  | { op: 'next'; who: number; n: number }
  | { op: 'floor-from'; who: number; from: number }
  | { op: 'floor'; who: number; value: bigint }
  | { op: 'promote'; who: number }
  | { op: 'finish'; who: number }
  | { op: 'fail'; who: number };

const nodes = 3;
const who = fc.integer({ min: 0, max: nodes - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('next' as const), who, n: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('floor-from' as const), who, from: who }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('floor' as const), who, value: fc.bigInt({ min: 0n, max: 2_000n }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('promote' as const), who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('finish' as const), who }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('fail' as const), who }) },
);

describe('BlockTokenSource with token slots', () => {
  it('never gives a token that another slot gave, and each source stays strictly increasing and durable', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), fc.bigInt({ min: 0n, max: 500n }), fc.integer({ min: 2, max: 12 }), async (ops, start, block) => {
        const size = BigInt(block);
        const stores = Array.from({ length: nodes }, () => new DeferredStore());
        // Every node starts from the same old ceiling (an upgrade, or the block they all saw).
        for (const s of stores) s.save(start);
        const sources = stores.map((s, i) => new BlockTokenSource(s, size, () => {}, { slots: { slot: i, count: nodes } }));
        const issued = new Map<bigint, number>();
        const last = sources.map(() => start);
        const promotions: Promise<void>[] = [];
        for (const o of ops) {
          const source = sources[o.who] as BlockTokenSource;
          const store = stores[o.who] as DeferredStore;
          if (o.op === 'next') {
            for (let i = 0; i < o.n; i++) {
              let token: bigint;
              try {
                token = source.next();
              } catch {
                break; // a failed save: nothing issued
              }
              expect(token, 'strictly increasing').toBeGreaterThan(last[o.who] as bigint);
              expect(token, 'at or below a durable ceiling').toBeLessThanOrEqual(store.load());
              expect(slotOfToken(token, size, nodes), 'a token of its own slot').toBe(o.who);
              const before = issued.get(token);
              expect(before, `token ${token} given by ${before} and ${o.who}`).toBeUndefined();
              issued.set(token, o.who);
              last[o.who] = token;
            }
          } else if (o.op === 'floor-from') {
            const from = sources[o.from] as BlockTokenSource;
            source.raiseFloor(from.reservedCeiling);
          } else if (o.op === 'floor') {
            source.raiseFloor(o.value);
          } else if (o.op === 'promote') {
            promotions.push(source.reserveAhead().catch(() => {}));
          } else if (o.op === 'finish') {
            store.finish();
            await drain();
          } else {
            store.fail();
            await drain();
          }
        }
        // A promotion waits for the background save before it, then saves its own: finish both.
        for (let round = 0; round < 4; round++) {
          for (const s of stores) s.finish();
          await drain();
        }
        await Promise.all(promotions);
        // After a heal: the survivor raises its floor above the others' ceilings, and goes on above everything.
        const a = sources[0] as BlockTokenSource;
        for (const other of sources) a.raiseFloor(other.reservedCeiling);
        let highest = 0n;
        for (const t of issued.keys()) if (t > highest) highest = t;
        expect(a.next()).toBeGreaterThan(highest);
      }),
      { numRuns: 300 },
    );
  });

  it('on an upgrade, starts above the old ceiling file in the first block of its own slot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-slots-'));
    dirs.push(dir);
    // A ceiling file written before slots: tokens up to 300,000 may have been given by anyone.
    writeFileSync(join(dir, 'token-ceiling'), '300000\n');
    const first = (slot: number) => new BlockTokenSource(new FileCeilingStore(dir), 100_000n, () => {}, { slots: clusterSlot(slot) }).next();
    expect(first(3)).toBe(300_001n); // block 3 is slot 3's: the rest of it
    expect(first(0)).toBeGreaterThan(300_000n);
    // Each run above saved its own ceiling; what counts is that every first token is above 300,000 and in its slot.
    for (const slot of [0, 1, 2, 63]) {
      const token = first(slot);
      expect(token).toBeGreaterThan(300_000n);
      expect(slotOfToken(token, 100_000n, TOKEN_SLOTS)).toBe(slot);
    }
  });

  it('reports exhaustion when its slot has no block left, though u64 has tokens above it', () => {
    const size = 100n;
    // Slot 1 of 2: the last block of u64 (partial) belongs to slot (MAX_TOKEN-1)/size % 2.
    const lastOwner = slotOfToken(MAX_TOKEN, size, 2);
    const other = 1 - lastOwner;
    const source = new BlockTokenSource(new MemoryCeilingStore(MAX_TOKEN - 150n), size, () => {}, { slots: { slot: other, count: 2 } });
    const tokens: bigint[] = [];
    while (!source.exhausted) tokens.push(source.next());
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.at(-1)).toBeLessThan(MAX_TOKEN);
    expect(() => source.next()).toThrow(expect.objectContaining({ reason: 'tokens-exhausted' }));
  });

  it('a single daemon keeps counting 1, 2, 3 across block ends', () => {
    const source = new BlockTokenSource(new MemoryCeilingStore(), 3n);
    expect(Array.from({ length: 8 }, () => source.next())).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
  });
});
