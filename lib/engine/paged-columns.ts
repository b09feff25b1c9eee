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
// columns. Each class is written out for its element type rather than made generic: one get()
// shared by several typed-array kinds would make its loads polymorphic on the hot path.
// A row must be below `capacity` (ensure) to be read or written.

export const PAGE_BITS = 16;
/** Rows per page: 65,536 (512 KiB of a Float64 column). */
export const PAGE_ROWS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_ROWS - 1;
/** Rows of the first page when a column is made or reset. */
export const FIRST_ROWS = 64;

/** The capacity after growing from `capacity` to hold row `rows - 1`: the first page doubles, then whole pages. */
function grownCapacity(capacity: number, rows: number): number {
  if (rows <= PAGE_ROWS) {
    let c = capacity;
    while (c < rows) c *= 2;
    return c;
  }
  return Math.ceil(rows / PAGE_ROWS) * PAGE_ROWS;
}

export class Float64Pages {
  /** The pages, PAGE_ROWS rows each but the first while it is smaller (read by tests: growth keeps them). */
  pages: Float64Array<ArrayBuffer>[] = [new Float64Array(FIRST_ROWS)];
  /** Rows that may be read and written (0 to capacity - 1). */
  capacity = FIRST_ROWS;

  get(row: number): number {
    return (this.pages[row >>> PAGE_BITS] as Float64Array)[row & PAGE_MASK] as number;
  }

  set(row: number, value: number): void {
    (this.pages[row >>> PAGE_BITS] as Float64Array)[row & PAGE_MASK] = value;
  }

  /** Room for rows 0 to `rows - 1`, new rows 0. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const to = grownCapacity(this.capacity, rows);
    if (this.capacity < PAGE_ROWS) {
      const first = new Float64Array(Math.min(to, PAGE_ROWS));
      first.set(this.pages[0] as Float64Array);
      this.pages[0] = first;
    }
    while (this.pages.length * PAGE_ROWS < to) this.pages.push(new Float64Array(PAGE_ROWS));
    this.capacity = to;
  }

  /** Back to one small page: no pass over the old ones. */
  reset(): void {
    this.pages = [new Float64Array(FIRST_ROWS)];
    this.capacity = FIRST_ROWS;
  }
}

export class Int32Pages {
  /** The pages, PAGE_ROWS rows each but the first while it is smaller (read by tests: growth keeps them). */
  pages: Int32Array<ArrayBuffer>[];
  capacity = FIRST_ROWS;

  /** `fill`: what a row holds before it is first written (-1 for "none"). */
  constructor(private readonly fill = 0) {
    this.pages = [this.page(FIRST_ROWS)];
  }

  get(row: number): number {
    return (this.pages[row >>> PAGE_BITS] as Int32Array)[row & PAGE_MASK] as number;
  }

  set(row: number, value: number): void {
    (this.pages[row >>> PAGE_BITS] as Int32Array)[row & PAGE_MASK] = value;
  }

  /** Room for rows 0 to `rows - 1`, new rows `fill` (one page of writes at a time, at most). */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const to = grownCapacity(this.capacity, rows);
    if (this.capacity < PAGE_ROWS) {
      const first = this.page(Math.min(to, PAGE_ROWS));
      first.set(this.pages[0] as Int32Array);
      this.pages[0] = first;
    }
    while (this.pages.length * PAGE_ROWS < to) this.pages.push(this.page(PAGE_ROWS));
    this.capacity = to;
  }

  reset(): void {
    this.pages = [this.page(FIRST_ROWS)];
    this.capacity = FIRST_ROWS;
  }

  private page(rows: number): Int32Array<ArrayBuffer> {
    const page = new Int32Array(rows);
    if (this.fill !== 0) page.fill(this.fill);
    return page;
  }
}

export class BigUint64Pages {
  /** The pages, PAGE_ROWS rows each but the first while it is smaller (read by tests: growth keeps them). */
  pages: BigUint64Array<ArrayBuffer>[] = [new BigUint64Array(FIRST_ROWS)];
  capacity = FIRST_ROWS;

  get(row: number): bigint {
    return (this.pages[row >>> PAGE_BITS] as BigUint64Array)[row & PAGE_MASK] as bigint;
  }

  set(row: number, value: bigint): void {
    (this.pages[row >>> PAGE_BITS] as BigUint64Array)[row & PAGE_MASK] = value;
  }

  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const to = grownCapacity(this.capacity, rows);
    if (this.capacity < PAGE_ROWS) {
      const first = new BigUint64Array(Math.min(to, PAGE_ROWS));
      first.set(this.pages[0] as BigUint64Array);
      this.pages[0] = first;
    }
    while (this.pages.length * PAGE_ROWS < to) this.pages.push(new BigUint64Array(PAGE_ROWS));
    this.capacity = to;
  }

  reset(): void {
    this.pages = [new BigUint64Array(FIRST_ROWS)];
    this.capacity = FIRST_ROWS;
  }
}

/**
 * References by row (a compact holder's lock name), in pages of plain arrays: a single JS array
 * doubles its backing store the same way, and at millions of rows that is one large object the
 * collector copies and scans whole.
 */
export class RefPages<T> {
  /** The pages, PAGE_ROWS rows each but the first while it is smaller (read by tests: growth keeps them). */
  pages: T[][];
  capacity = FIRST_ROWS;

  /** `empty`: what a row holds before it is first written. */
  constructor(private readonly empty: T) {
    this.pages = [this.page(FIRST_ROWS)];
  }

  get(row: number): T {
    return (this.pages[row >>> PAGE_BITS] as T[])[row & PAGE_MASK] as T;
  }

  set(row: number, value: T): void {
    (this.pages[row >>> PAGE_BITS] as T[])[row & PAGE_MASK] = value;
  }

  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const to = grownCapacity(this.capacity, rows);
    if (this.capacity < PAGE_ROWS) {
      const old = this.pages[0] as T[];
      const first = this.page(Math.min(to, PAGE_ROWS));
      for (let i = 0; i < old.length; i++) first[i] = old[i] as T;
      this.pages[0] = first;
    }
    while (this.pages.length * PAGE_ROWS < to) this.pages.push(this.page(PAGE_ROWS));
    this.capacity = to;
  }

  reset(): void {
    this.pages = [this.page(FIRST_ROWS)];
    this.capacity = FIRST_ROWS;
  }

  private page(rows: number): T[] {
    // Pushed, not `new Array(rows).fill()`: an array made with holes stays a holey array in V8.
    const page: T[] = [];
    for (let i = 0; i < rows; i++) page.push(this.empty);
    return page;
  }
}
