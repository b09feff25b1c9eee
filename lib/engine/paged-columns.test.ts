// The paged columns (paged-columns.ts) read back what was written, against a map as the model,
// through random writes and growths across page boundaries (the first page's doublings, then
// whole pages) and resets; and a growth past the first page adds pages without copying the ones
// it has, which is the point of them (issue 29: an active growing to 5 M locks froze). RowPages,
// the pages of rows the compact holders and the lanes use, the same.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIRST_ROWS, Float64Pages, Int32Pages, PAGE_ROWS, RowPages } from './paged-columns.ts';

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
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new Float64Pages(), 0, (n) => n / 4, ops)),
      { numRuns: 150 },
    );
  });

  it('read back every write, and rows never written read as the fill (Int32, filled with -1)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => agrees(new Int32Pages(-1), -1, (n) => n, ops)),
      { numRuns: 150 },
    );
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

  it('pages of rows: the first page doubles with its rows copied, later pages are added and kept', () => {
    class Page {
      constructor(readonly ids: Float64Array) {}
    }
    let copies = 0;
    const rows = new RowPages(
      (n) => new Page(new Float64Array(n)),
      (from: Page, n) => {
        copies++;
        const ids = new Float64Array(n);
        ids.set(from.ids);
        return new Page(ids);
      },
    );
    const at = (row: number): number => (rows.pages[row >>> 16] as Page).ids[row & 0xffff] as number;
    const put = (row: number, v: number): void => {
      if (row >= rows.capacity) rows.ensure(row + 1);
      (rows.pages[row >>> 16] as Page).ids[row & 0xffff] = v;
    };
    for (let row = 0; row < 3 * PAGE_ROWS + 10; row += 97) put(row, row + 0.5);
    put(3 * PAGE_ROWS + 5, 3);
    expect(copies, 'the first page doubled from 64 to a whole page, no more').toBe(Math.log2(PAGE_ROWS / FIRST_ROWS));
    expect(rows.pages.length).toBe(4);
    const kept = [...rows.pages];
    put(40 * PAGE_ROWS, 7);
    expect(rows.pages.slice(0, 4)).toEqual(kept);
    for (let i = 0; i < 4; i++) expect(rows.pages[i]).toBe(kept[i]);
    for (let row = 0; row < 3 * PAGE_ROWS + 10; row += 97) expect(at(row)).toBe(row + 0.5);
    expect(at(3 * PAGE_ROWS + 5)).toBe(3);
    expect(at(40 * PAGE_ROWS)).toBe(7);
    rows.reset();
    expect([rows.capacity, rows.pages.length, at(0)]).toEqual([FIRST_ROWS, 1, 0]);
  });
});
