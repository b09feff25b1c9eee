// Columns indexed by row (a compact holder's slot, a heap position) kept in fixed-size pages, so
// that a table growing to millions of rows never copies a column (issue 29).
//
// Why. One typed array per column grows by doubling, and each doubling copies the whole column
// in one call: an active filling to 5,000,000 locks copied about 200 MB at 4 M rows, 1 to 2 s of
// one turn with its deadline columns, longer than the 1 s peer timeout, and stepped out of the
// active role ("frozen longer than the peer timeout") a few times per fill. In pages, growth is
// one new page of PAGE_ROWS rows (a zeroed allocation, no copy); a read is one shift, one mask
// and one more array load.
//
// The first page grows by doubling from FIRST_ROWS up to PAGE_ROWS (a copy of 32,768 rows at
// most), so an engine with a few locks, as in most tests and small deployments, keeps small
// columns. Growth and reset are RowPages' for every column; get() and set() are written out per
// element type rather than shared: one get() over several typed-array kinds would make its loads
// polymorphic.
// A row must be below `capacity` (ensure) to be read or written.
//
// A get() or set() is a call that the optimizing compiler does not always inline (a budget per
// function): the compact holders' and the lanes' columns, on the path of every grant and
// release, are pages of rows instead (RowPages below: holder-pages.ts, slot-deadlines.ts), found
// once per row with PAGE_BITS and PAGE_MASK. The column classes serve the slot heap, off that path.

export const PAGE_BITS = 16;
/** Rows per page: 65,536 (512 KiB of a Float64 column). */
export const PAGE_ROWS = 1 << PAGE_BITS;
export const PAGE_MASK = PAGE_ROWS - 1;
/** Rows of the first page when a column is made or reset. */
export const FIRST_ROWS = 64;

/** The capacity after growing from `capacity` to hold row `rows - 1`: the first page doubles, then whole pages. */
export function grownCapacity(capacity: number, rows: number): number {
  if (rows <= PAGE_ROWS) {
    let c = capacity;
    while (c < rows) c *= 2;
    return c;
  }
  return Math.ceil(rows / PAGE_ROWS) * PAGE_ROWS;
}

/**
 * Pages of rows: each page an object with a typed array per column for PAGE_ROWS consecutive rows
 * (the first page smaller until it has doubled to PAGE_ROWS). A caller finds a row's page with
 * `pages[row >>> PAGE_BITS]` and its place in it with `row & PAGE_MASK`.
 */
export class RowPages<P> {
  pages: P[];
  capacity = FIRST_ROWS;

  /** `make(rows)`: a new page of `rows` rows; `grown(page, rows)`: a bigger copy of the first page. */
  constructor(
    private readonly make: (rows: number) => P,
    private readonly grown: (from: P, rows: number) => P,
  ) {
    this.pages = [make(FIRST_ROWS)];
  }

  /** Room for rows 0 to `rows - 1`: the first page doubled while under PAGE_ROWS, then new pages. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const to = grownCapacity(this.capacity, rows);
    if (this.capacity < PAGE_ROWS) this.pages[0] = this.grown(this.pages[0] as P, Math.min(to, PAGE_ROWS));
    while (this.pages.length * PAGE_ROWS < to) this.pages.push(this.make(PAGE_ROWS));
    this.capacity = to;
  }

  /** One small page again: no pass over the old ones. */
  reset(): void {
    this.pages = [this.make(FIRST_ROWS)];
    this.capacity = FIRST_ROWS;
  }
}

/** Growth and reset of a column's pages (RowPages); only get() and set() are the column's own. */
function float64Page(rows: number): Float64Array<ArrayBuffer> {
  return new Float64Array(rows);
}

function grownFloat64(from: Float64Array<ArrayBuffer>, rows: number): Float64Array<ArrayBuffer> {
  const page = new Float64Array(rows);
  page.set(from);
  return page;
}

export class Float64Pages extends RowPages<Float64Array<ArrayBuffer>> {
  constructor() {
    super(float64Page, grownFloat64);
  }

  get(row: number): number {
    return (this.pages[row >>> PAGE_BITS] as Float64Array)[row & PAGE_MASK] as number;
  }

  set(row: number, value: number): void {
    (this.pages[row >>> PAGE_BITS] as Float64Array)[row & PAGE_MASK] = value;
  }
}

export class Int32Pages extends RowPages<Int32Array<ArrayBuffer>> {
  /** `fill`: what a row holds before it is first written (-1 for "none"; new rows get it at ensure). */
  constructor(fill = 0) {
    const page = (rows: number): Int32Array<ArrayBuffer> => {
      const p = new Int32Array(rows);
      if (fill !== 0) p.fill(fill);
      return p;
    };
    super(page, (from, rows) => {
      const p = page(rows);
      p.set(from);
      return p;
    });
  }

  get(row: number): number {
    return (this.pages[row >>> PAGE_BITS] as Int32Array)[row & PAGE_MASK] as number;
  }

  set(row: number, value: number): void {
    (this.pages[row >>> PAGE_BITS] as Int32Array)[row & PAGE_MASK] = value;
  }
}
