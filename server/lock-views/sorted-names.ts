// A set of strings kept in code-unit order (the order of `<` on strings, which the ops API's
// lock pages promise), with O(log n) lookups and cheap inserts and deletes: the names live in
// sorted blocks of at most MAX_BLOCK, found by binary search over each block's first name
// (the layout of Python's sortedcontainers). An insert or delete moves at most MAX_BLOCK
// pointers inside one block; a page walks blocks from a binary-searched start.
export const MAX_BLOCK = 1_024;
const MIN_BLOCK = MAX_BLOCK / 4;

/**
 * First index in `sorted` whose value is >= `name` (or > with `after`). This and blockFor are written out rather than
 * through lib/binary-search.ts's firstIndexWhere: the index is updated for every lock that comes
 * and goes, two or three searches per acquire+release pair, and a closure per search is an
 * allocation on the lock path (issue 14's budget is a fraction of a microsecond per pair).
 */
function lowerBound(sorted: readonly string[], name: string, after: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid] as string;
    if (v < name || (after && v === name)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SortedNames {
  private blocks: string[][] = [];
  private count = 0;

  /** Builds from names in any order (duplicates are dropped). */
  static from(names: Iterable<string>): SortedNames {
    const all = [...new Set(names)];
    // The default sort compares UTF-16 code units, the same order as `<`, and is faster than a comparator.
    all.sort();
    const out = new SortedNames();
    const step = MAX_BLOCK / 2;
    for (let i = 0; i < all.length; i += step) out.blocks.push(all.slice(i, i + step));
    out.count = all.length;
    return out;
  }

  /** Takes blocks already in order, non-empty, at most MAX_BLOCK each, no name twice (sliced-sort.ts builds them). */
  static fromSortedBlocks(blocks: string[][], count: number): SortedNames {
    const out = new SortedNames();
    out.blocks = blocks;
    out.count = count;
    return out;
  }

  get size(): number {
    return this.count;
  }

  /** The block that holds `name` if anything does: the last block whose first name is <= name. */
  private blockFor(name: string): number {
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (((blocks[mid] as string[])[0] as string) <= name) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(0, lo - 1);
  }

  has(name: string): boolean {
    const block = this.blocks[this.blockFor(name)];
    if (block === undefined) return false;
    const i = lowerBound(block, name, false);
    return block[i] === name;
  }

  /** Adds `name`; false if it was there already. */
  insert(name: string): boolean {
    if (this.blocks.length === 0) {
      this.blocks.push([name]);
      this.count = 1;
      return true;
    }
    const b = this.blockFor(name);
    const block = this.blocks[b] as string[];
    const i = lowerBound(block, name, false);
    if (block[i] === name) return false;
    block.splice(i, 0, name);
    this.count++;
    if (block.length > MAX_BLOCK) this.blocks.splice(b + 1, 0, block.splice(MAX_BLOCK / 2));
    return true;
  }

  /** Removes `name`; false if it was not there. */
  delete(name: string): boolean {
    const b = this.blockFor(name);
    const block = this.blocks[b];
    if (block === undefined) return false;
    const i = lowerBound(block, name, false);
    if (block[i] !== name) return false;
    block.splice(i, 1);
    this.count--;
    if (block.length === 0) this.blocks.splice(b, 1);
    else if (block.length < MIN_BLOCK && this.blocks.length > 1) this.mergeSmall(b);
    return true;
  }

  /** Joins a block that shrank with a neighbour, splitting again if the result is too big. */
  private mergeSmall(b: number): void {
    const left = b > 0 ? b - 1 : b;
    const a = this.blocks[left] as string[];
    const c = this.blocks[left + 1] as string[];
    const joined = a.concat(c);
    if (joined.length > MAX_BLOCK) this.blocks.splice(left, 2, joined.slice(0, joined.length >>> 1), joined.slice(joined.length >>> 1));
    else this.blocks.splice(left, 2, joined);
  }

  /**
   * Names in order, starting with the first one > `after` (>= `from` too, when given): the
   * walk of one lock page, `limit` names at most (the caller stops at the end of its prefix).
   */
  *walk(after: string | null, from: string, limit: number): Generator<string, void, undefined> {
    let start = from;
    let strict = false;
    if (after !== null && after >= from) {
      start = after;
      strict = true;
    }
    let b = this.blockFor(start);
    let block = this.blocks[b];
    if (block === undefined) return;
    let i = lowerBound(block, start, strict);
    let given = 0;
    while (given < limit) {
      if (i >= block.length) {
        block = this.blocks[++b];
        if (block === undefined) return;
        i = 0;
        continue;
      }
      yield block[i++] as string;
      given++;
    }
  }

  /** Every name in order (tests compare with a plain sort). */
  toArray(): string[] {
    return this.blocks.flat();
  }
}
