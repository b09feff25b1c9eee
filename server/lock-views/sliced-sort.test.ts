import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortInSlices } from './sliced-sort.ts';
import { MAX_BLOCK } from './sorted-names.ts';

const codeUnitSort = (names: Iterable<string>): string[] => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const nameArb = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', 'z', '/', 'é', '\u{1F600}', 'A'), minLength: 1, maxLength: 3 }),
  fc.integer({ min: 0, max: 3_000 }).map((i) => `k${i}`),
);

describe('sortInSlices', () => {
  it('gives the names of a plain sort of a Set, each step handling at most its budget', () => {
    fc.assert(
      fc.property(fc.array(nameArb, { maxLength: 3_000 }), fc.integer({ min: 1, max: 700 }), (names, budget) => {
        const steps = sortInSlices(names[Symbol.iterator](), budget);
        let handled = 0;
        let step = steps.next();
        for (; step.done !== true; step = steps.next()) {
          expect(step.value).toBeGreaterThan(0);
          expect(step.value).toBeLessThanOrEqual(budget);
          handled += step.value;
        }
        const sorted = step.value;
        expect(sorted.toArray()).toEqual(codeUnitSort(new Set(names)));
        expect(sorted.size).toBe(new Set(names).size);
        // Every name is collected once and merged once; the last chunk and merge slice end the generator.
        expect(handled).toBeLessThanOrEqual(2 * names.length);
        const blocks = (sorted as unknown as { blocks: string[][] }).blocks;
        expect(blocks.every((b) => b.length > 0 && b.length <= MAX_BLOCK)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps the blocks it builds usable for inserts and deletes', () => {
    const names = Array.from({ length: 5_000 }, (_, i) => `n${(i * 7_919) % 5_000}`);
    const steps = sortInSlices(names[Symbol.iterator](), 333);
    let step = steps.next();
    while (step.done !== true) step = steps.next();
    const sorted = step.value;
    for (let i = 0; i < 5_000; i += 3) sorted.delete(`n${i}`);
    for (let i = 0; i < 2_000; i++) sorted.insert(`m${i}`);
    const model = new Set(names.filter((n) => Number(n.slice(1)) % 3 !== 0));
    for (let i = 0; i < 2_000; i++) model.add(`m${i}`);
    expect(sorted.toArray()).toEqual(codeUnitSort(model));
  });

  it('refuses a budget that is not a positive whole number', () => {
    expect(() => sortInSlices([][Symbol.iterator](), 0).next()).toThrow(/budget must be a positive integer/);
  });
});
