// An indexed 4-ary min-heap of deadlines. One heap serves every lease and wait deadline in
// the engine, so 100,000 leased locks cost one timer in the server and O(log n) per change,
// never a timer per lock or a scan per tick. Items remember their own slot (`heapIndex`),
// which makes removal of an arbitrary item O(log n) too. Four children per node halve the
// depth of a binary heap: removals, which mostly take an old lease out and sink the newest one
// into its slot, walk 9 levels instead of 17 at 100,000 leases, with the children of a node
// side by side in memory.

export interface HeapItem {
  /** The deadline this item is filed under (monotonic ms). */
  due: number;
  /** Slot in the heap array, or -1 when not in the heap. */
  heapIndex: number;
}

/** The slot of the parent of slot `i` (> 0): four children per node. */
export const parentSlot = (i: number): number => (i - 1) >> 2;

export class DeadlineHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0 || this.items[i] !== item) return;
    const last = this.items.pop();
    item.heapIndex = -1;
    // items[i] is item, so the heap was not empty and pop() gave an item.
    if (last === undefined || last === item) return;
    this.items[i] = last;
    last.heapIndex = i;
    this.down(i);
    this.up(last.heapIndex);
  }

  /** Re-files an item whose `due` has changed (earlier or later). */
  update(item: T): void {
    if (!this.has(item)) {
      this.push(item);
      return;
    }
    this.up(item.heapIndex);
    this.down(item.heapIndex);
  }

  private up(start: number): void {
    const items = this.items;
    let i = start;
    const item = items[i];
    if (item === undefined) return;
    while (i > 0) {
      const parentIndex = parentSlot(i);
      const parent = items[parentIndex];
      if (parent === undefined || parent.due <= item.due) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = parentIndex;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(start: number): void {
    const items = this.items;
    const n = items.length;
    let i = start;
    const item = items[i];
    if (item === undefined) return;
    for (;;) {
      const first = 4 * i + 1;
      // Bounds first: a read past the end would make V8's load slower; below n an item is always there.
      if (first >= n) break;
      const end = first + 4 < n ? first + 4 : n;
      let child = first;
      let c = items[first];
      for (let k = first + 1; k < end; k++) {
        const other = items[k];
        if (other !== undefined && c !== undefined && other.due < c.due) {
          c = other;
          child = k;
        }
      }
      if (c === undefined || c.due >= item.due) break;
      items[i] = c;
      c.heapIndex = i;
      i = child;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
