// What baton_tokens_remaining reports: the tokens a node's slot still holds above its last
// token, counted in O(1) and checked against a count token by token on small token spaces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from './token-source.ts';
import { clusterSlot, slotOfToken, slotTokensAbove, TOKEN_SLOTS } from './token-slots.ts';

function countByHand(after: bigint, size: bigint, slot: number, count: number, top: bigint): bigint {
  let n = 0n;
  for (let t = after + 1n; t <= top; t++) if (slotOfToken(t, size, count) === slot) n++;
  return n;
}

describe('slotTokensAbove', () => {
  it('equals a count token by token, for any block size, slot layout, position and top', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 5 }),
        fc.nat(4),
        fc.integer({ min: 1, max: 200 }),
        fc.nat(210),
        (size, count, slotSeed, top, after) => {
          const slot = slotSeed % count;
          const expected = countByHand(BigInt(after), BigInt(size), slot, count, BigInt(top));
          expect(slotTokensAbove(BigInt(after), BigInt(size), { slot, count }, BigInt(top))).toBe(expected);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('is the whole u64 for a fresh single daemon and about a 64th of it for a fresh cluster node', () => {
    expect(slotTokensAbove(0n, 100_000n, { slot: 0, count: 1 })).toBe(MAX_TOKEN);
    const share = slotTokensAbove(0n, 100_000n, clusterSlot(1));
    expect(share).toBeGreaterThan(MAX_TOKEN / BigInt(TOKEN_SLOTS) - 100_000n);
    expect(share).toBeLessThanOrEqual(MAX_TOKEN / BigInt(TOKEN_SLOTS) + 100_000n);
  });
});

describe('BlockTokenSource.remaining', () => {
  it('goes down by one per token issued, and is 0 when the source is exhausted', () => {
    const size = 10n;
    const source = new BlockTokenSource(new MemoryCeilingStore(MAX_TOKEN - 25n), size);
    const before = source.remaining;
    expect(before).toBe(25n);
    source.next();
    expect(source.remaining).toBe(24n);
    for (let i = 0; i < 24; i++) source.next();
    expect(source.remaining).toBe(0n);
    expect(source.exhausted).toBe(true);
  });

  it('counts only the blocks of its own slot', () => {
    const source = new BlockTokenSource(new MemoryCeilingStore(MAX_TOKEN - 400n), 100n, () => {}, { slots: { slot: 1, count: 2 } });
    expect(source.remaining).toBe(countByHand(MAX_TOKEN - 400n, 100n, 1, 2, MAX_TOKEN));
    source.next();
    expect(source.remaining).toBe(countByHand(source.highWater, 100n, 1, 2, MAX_TOKEN));
  });
});
