// An indexed 4-ary min-heap of deadlines. One heap serves every lease and wait deadline in
// the engine, so 100,000 leased locks cost one timer in the server and O(log n) per change,
// never a timer per lock or a scan per tick. Items remember their own slot (`heapIndex`),
// which makes removal of an arbitrary item O(log n) too. Four children per node halve the
// depth of a binary heap: removals, which mostly take an old lease out and sink the newest one
// into its slot, walk 9 levels instead of 17 at 100,000 leases, with the children of a node
// side by side in memory.

export interface HeapItem {
  /** Slot in the heap array, or -1 when not in the heap. */
  heapIndex: number;
}

/** The slot of the parent of slot `i` (> 0): four children per node. */
export const parentSlot = (i: number): number => (i - 1) >> 2;

const NEVER = Number.POSITIVE_INFINITY;

export class DeadlineHeap<T extends HeapItem> {
  private readonly items: T[] = [];
  /**
   * Each slot's deadline (monotonic ms), beside the items rather than in them: a time in an
   * object's field is a 16-byte box on Node 20 (issue 29: 24 bytes per leased claim with its
   * field), and sifting compares the column without loading the items.
   */
  private dues = new Float64Array(64);

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  /** The earliest deadline; +Infinity when the heap is empty. */
  peekDue(): number {
    return this.items.length === 0 ? NEVER : (this.dues[0] as number);
  }

  /** The deadline `item` is filed under; +Infinity when it is not in the heap. */
  dueOf(item: T): number {
    return this.has(item) ? (this.dues[item.heapIndex] as number) : NEVER;
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T, due: number): void {
    const i = this.items.length;
    if (i === this.dues.length) {
      const grown = new Float64Array(2 * i);
      grown.set(this.dues);
      this.dues = grown;
    }
    this.items.push(item);
    this.up(i, item, due);
  }

  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0 || this.items[i] !== item) return;
    const last = this.items.pop();
    item.heapIndex = -1;
    // items[i] is item, so the heap was not empty and pop() gave an item.
    if (last === undefined || last === item) return;
    const due = this.dues[this.items.length] as number;
    this.down(i, last, due);
    this.up(last.heapIndex, last, due);
  }

  /**
   * Empties the heap in one pass: every item leaves it (heapIndex -1), with no sifting. A reset
   * ends every claim at once; removing them one by one was O(n log n) in one loop turn, seconds
   * at millions of leases on a standby that re-syncs (issue 29).
   */
  clear(): void {
    for (const item of this.items) item.heapIndex = -1;
    this.items.length = 0;
    this.dues = new Float64Array(64);
  }

  /** Files `item` under `due`: moved earlier or later if it is in the heap, pushed if not. */
  update(item: T, due: number): void {
    if (!this.has(item)) {
      this.push(item, due);
      return;
    }
    this.up(item.heapIndex, item, due);
    this.down(item.heapIndex, item, due);
  }

  /** Places `item` (due at `due`) at slot `start` or above it. */
  private up(start: number, item: T, due: number): void {
    const items = this.items;
    const dues = this.dues;
    let i = start;
    while (i > 0) {
      const parentIndex = parentSlot(i);
      const parentDue = dues[parentIndex] as number;
      if (parentDue <= due) break;
      const parent = items[parentIndex] as T;
      items[i] = parent;
      dues[i] = parentDue;
      parent.heapIndex = i;
      i = parentIndex;
    }
    items[i] = item;
    dues[i] = due;
    item.heapIndex = i;
  }

  /** Places `item` (due at `due`) at slot `start` or below it. */
  private down(start: number, item: T, due: number): void {
    const items = this.items;
    const dues = this.dues;
    const n = items.length;
    let i = start;
    for (;;) {
      const first = 4 * i + 1;
      // Bounds first: below n a slot always has an item and a due.
      if (first >= n) break;
      const end = first + 4 < n ? first + 4 : n;
      let child = first;
      let childDue = dues[first] as number;
      for (let k = first + 1; k < end; k++) {
        const d = dues[k] as number;
        if (d < childDue) {
          childDue = d;
          child = k;
        }
      }
      if (childDue >= due) break;
      const c = items[child] as T;
      items[i] = c;
      dues[i] = childDue;
      c.heapIndex = i;
      i = child;
    }
    items[i] = item;
    dues[i] = due;
    item.heapIndex = i;
  }
}
