import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BLOCK, SortedNames } from './sorted-names.ts';

const codeUnitSort = (names: Iterable<string>): string[] => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** Few distinct names (so deletes hit), non-ASCII and astral letters among them. */
const nameArb = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', 'z', '/', 'é', 'ü', '\u{1F600}', 'A'), minLength: 1, maxLength: 4 }),
  fc.integer({ min: 0, max: 5_000 }).map((i) => `k${i}`),
);
const opArb = fc.oneof(fc.record({ op: fc.constant('insert' as const), name: nameArb }), fc.record({ op: fc.constant('delete' as const), name: nameArb }));

describe('SortedNames', () => {
  it('holds the same names in the same order as a plain sort of a Set, under any inserts and deletes', () => {
    fc.assert(
      fc.property(fc.array(nameArb, { maxLength: 3_000 }), fc.array(opArb, { maxLength: 3_000 }), (initial, ops) => {
        const sorted = SortedNames.from(initial);
        const model = new Set(initial);
        for (const { op, name } of ops) {
          if (op === 'insert') {
            expect(sorted.insert(name)).toBe(!model.has(name));
            model.add(name);
          } else {
            expect(sorted.delete(name)).toBe(model.has(name));
            model.delete(name);
          }
        }
        expect(sorted.size).toBe(model.size);
        expect(sorted.toArray()).toEqual(codeUnitSort(model));
        for (const name of ops.map((o) => o.name)) expect(sorted.has(name)).toBe(model.has(name));
      }),
      { numRuns: 60 },
    );
  });

  it('walks a page exactly as filtering a full sort would: names after the cursor, from the prefix on, at most limit', () => {
    fc.assert(
      fc.property(
        fc.array(nameArb, { maxLength: 4_000 }),
        fc.option(nameArb, { nil: null }),
        fc.constantFrom('', 'a', 'k1', 'z', 'é'),
        fc.integer({ min: 1, max: 1_500 }),
        (names, cursor, prefix, limit) => {
          const sorted = SortedNames.from(names);
          const expected = codeUnitSort(new Set(names))
            .filter((n) => n >= prefix && (cursor === null || n > cursor))
            .slice(0, limit);
          expect([...sorted.walk(cursor, prefix, limit)]).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('splits and merges blocks as it grows and shrinks without losing order', () => {
    const sorted = new SortedNames();
    const all = Array.from({ length: MAX_BLOCK * 5 }, (_, i) => `n${String((i * 7_919) % (MAX_BLOCK * 5)).padStart(6, '0')}`);
    for (const n of all) sorted.insert(n);
    expect(sorted.toArray()).toEqual(codeUnitSort(all));
    for (const n of all.filter((_, i) => i % 3 !== 0)) sorted.delete(n);
    expect(sorted.toArray()).toEqual(codeUnitSort(all.filter((_, i) => i % 3 === 0)));
    expect((sorted as unknown as { blocks: string[][] }).blocks.every((b) => b.length > 0 && b.length <= MAX_BLOCK)).toBe(true);
  });
});
