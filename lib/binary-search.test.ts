import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstIndexWhere } from './binary-search.ts';

describe('firstIndexWhere', () => {
  it('finds where a sorted array reaches a value (a lower bound), or its length when nothing does', () => {
    const sorted = [1, 3, 3, 5, 8];
    expect(firstIndexWhere(sorted.length, (i) => (sorted[i] as number) >= 3)).toBe(1);
    expect(firstIndexWhere(sorted.length, (i) => (sorted[i] as number) > 3)).toBe(3);
    expect(firstIndexWhere(sorted.length, (i) => (sorted[i] as number) >= 0)).toBe(0);
    expect(firstIndexWhere(sorted.length, (i) => (sorted[i] as number) >= 9)).toBe(5);
  });

  it('is 0 for nothing to search and never asks about an index at or past the count', () => {
    const asked: number[] = [];
    expect(
      firstIndexWhere(0, (i) => {
        asked.push(i);
        return true;
      }),
    ).toBe(0);
    expect(asked).toEqual([]);
    firstIndexWhere(7, (i) => {
      asked.push(i);
      return i >= 6;
    });
    expect(asked.every((i) => i >= 0 && i < 7)).toBe(true);
  });

  it('asks about log2(count) indexes, not count', () => {
    let asked = 0;
    firstIndexWhere(1_000_000, (i) => {
      asked++;
      return i >= 123_457;
    });
    expect(asked).toBeLessThanOrEqual(20);
  });

  it('gives the index a linear scan gives, for any monotone test', () => {
    fc.assert(
      fc.property(fc.nat({ max: 200 }), fc.nat({ max: 220 }), (count, from) => {
        const holds = (i: number) => i >= from;
        let linear = 0;
        while (linear < count && !holds(linear)) linear++;
        expect(firstIndexWhere(count, holds)).toBe(linear);
      }),
    );
  });
});
