// The compact holders' columns (compact-holders.ts) in pages of rows: a page holds every column
// of PAGE_ROWS consecutive slots, so a table growing to millions of locks adds a page and copies
// nothing (paged-columns.ts says why), and an operation on a slot finds its page once, then
// reads and writes plain typed arrays: `pages[slot >>> PAGE_BITS]`, then `page.ids[slot & PAGE_MASK]`.
import { RowPages } from './paged-columns.ts';

export class HolderPage {
  /** The lock's name, while the slot is held or parked; null when free. */
  readonly names: (string | null)[] = [];
  /** The holder's claim id; 0 while nobody holds the slot's lock. */
  readonly ids: Float64Array<ArrayBuffer>;
  readonly tokens: BigUint64Array<ArrayBuffer>;
  readonly grantedAt: Float64Array<ArrayBuffer>;
  readonly leaseMs: Float64Array<ArrayBuffer>;
  /** The holder's owner, address and client name, as an entry of ClaimOrigins. */
  readonly origin: Int32Array<ArrayBuffer>;
  /** Where the slot is among the parked locks (parked-locks.ts), -1 when not parked. */
  readonly parkPos: Int32Array<ArrayBuffer>;

  constructor(rows: number) {
    // Pushed one by one: an array made with holes (`new Array(n)`) stays a slower holey array in V8.
    for (let i = 0; i < rows; i++) this.names.push(null);
    this.ids = new Float64Array(rows);
    this.tokens = new BigUint64Array(rows);
    this.grantedAt = new Float64Array(rows);
    this.leaseMs = new Float64Array(rows);
    this.origin = new Int32Array(rows);
    this.parkPos = new Int32Array(rows).fill(-1);
  }

  /** A bigger first page with `from`'s rows (the first page doubles up to PAGE_ROWS). */
  static grownFrom(from: HolderPage, rows: number): HolderPage {
    const page = new HolderPage(rows);
    for (let i = 0; i < from.names.length; i++) page.names[i] = from.names[i] as string | null;
    page.ids.set(from.ids);
    page.tokens.set(from.tokens);
    page.grantedAt.set(from.grantedAt);
    page.leaseMs.set(from.leaseMs);
    page.origin.set(from.origin);
    page.parkPos.set(from.parkPos);
    return page;
  }
}

/** The compact holders' pages (paged-columns.ts RowPages). */
export function holderPages(): RowPages<HolderPage> {
  return new RowPages(
    (rows) => new HolderPage(rows),
    (from, rows) => HolderPage.grownFrom(from, rows),
  );
}
