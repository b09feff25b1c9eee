// The paged columns (paged-columns.ts) read back what was written, against a plain array as the
// model, through random writes and growths across page boundaries (the first page's doublings,
// then whole pages) and resets; and a growth past the first page adds pages without copying the
// ones it has, which is the point of them (issue 29: an active growing to 5 M locks froze).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BigUint64Pages, FIRST_ROWS, Float64Pages, Int32Pages, PAGE_ROWS, RefPages } from './paged-columns.ts';

/** Rows near the edges that matter: the first page's doublings, the page boundaries, a few pages in. */
const rowArb = fc.oneof(
  fc.nat(2 * FIRST_ROWS),
  fc.integer({ min: PAGE_ROWS / 2 - 2, max: PAGE_ROWS / 2 + 2 }),
  fc.integer({ min: PAGE_ROWS - 3, max: PAGE_ROWS + 3 }),
  fc.integer({ min: 3 * PAGE_ROWS - 3, max: 3 * PAGE_ROWS + 3 }),
);

type Op = { kind: 'write'; row: number; value: number } | { kind: 'reset' };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('write' as const), row: rowArb, value: fc.integer({ min: -1_000_000, max: 1_000_000 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
);

interface Column<V> {
  capacity: number;
  get(row: number): V;
  set(row: number, value: V): void;
  ensure(rows: number): void;
  reset(): void;
}

/** Plays `ops` on `column` and on a Map (unwritten rows read `empty`), checking every row written so far after each step. */
function agrees<V>(column: Column<V>, empty: V, value: (n: number) => V, ops: Op[]): void {
  const model = new Map<number, V>();
  for (const op of ops) {
    if (op.kind === 'reset') {
      column.reset();
      model.clear();
      expect(column.capacity).toBe(FIRST_ROWS);
    } else {
      if (op.row >= column.capacity) column.ensure(op.row + 1);
      expect(column.capacity).toBeGreaterThan(op.row);
      column.set(op.row, value(op.value));
      model.set(op.row, value(op.value));
    }
    for (const [row, v] of model) expect(column.get(row)).toBe(v);
    // Rows never written since the last reset read as the column's empty value.
    for (const row of [0, FIRST_ROWS - 1, column.capacity - 1]) if (!model.has(row)) expect(column.get(row)).toBe(empty);
  }
}

describe('paged columns', () => {
  it('read back every write, across the first page doubling, page boundaries and resets (Float64)', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new Float64Pages(), 0, (n) => n / 4, ops)), { numRuns: 150 });
  });

  it('read back every write, and rows never written read as the fill (Int32, filled with -1)', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new Int32Pages(-1), -1, (n) => n, ops)), { numRuns: 150 });
  });

  it('read back every write (BigUint64 tokens, past 2^53)', () => {
    const token = (n: number): bigint => 2n ** 60n + BigInt(n + 1_000_000);
    fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new BigUint64Pages(), 0n, token, ops)), { numRuns: 150 });
  });

  it('read back every write (references, unwritten rows null)', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new RefPages<string | null>(null), null, (n) => `k${n}`, ops)), { numRuns: 150 });
  });

  it('grows the first page by doubling up to a page, then by whole pages', () => {
    const c = new Float64Pages();
    expect(c.capacity).toBe(FIRST_ROWS);
    c.ensure(FIRST_ROWS + 1);
    expect(c.capacity).toBe(2 * FIRST_ROWS);
    c.ensure(PAGE_ROWS);
    expect(c.capacity).toBe(PAGE_ROWS);
    c.ensure(PAGE_ROWS + 1);
    expect(c.capacity).toBe(2 * PAGE_ROWS);
    c.ensure(5 * PAGE_ROWS - 7);
    expect(c.capacity).toBe(5 * PAGE_ROWS);
  });

  it('a growth past the first page keeps the pages it has: rows already there are not copied', () => {
    // The same page objects before and after a growth: nothing was copied into new ones.
    const c = new Int32Pages(-1);
    c.ensure(2 * PAGE_ROWS);
    const before = [...c.pages];
    c.set(PAGE_ROWS + 5, 42);
    c.ensure(40 * PAGE_ROWS);
    const after = c.pages;
    expect(after.length).toBe(40);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(c.get(PAGE_ROWS + 5)).toBe(42);
    expect(c.get(39 * PAGE_ROWS + 17)).toBe(-1);
  });
});
