// An indexed binary min-heap of deadlines. One heap serves every lease and wait deadline in
// the engine, so 100,000 leased locks cost one timer in the server and O(log n) per change,
// never a timer per lock or a scan per tick. Items remember their own slot (`heapIndex`),
// which makes removal of an arbitrary item O(log n) too.

export interface HeapItem {
  /** The deadline this item is filed under (monotonic ms). */
  due: number;
  /** Slot in the heap array, or -1 when not in the heap. */
  heapIndex: number;
}

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
      const parentIndex = (i - 1) >> 1;
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
      const left = 2 * i + 1;
      // Bounds first: a read past the end would make V8's load slower; below n an item is always there.
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      let c = items[left];
      const r = right < n ? items[right] : undefined;
      if (r !== undefined && c !== undefined && r.due < c.due) {
        c = r;
        child = right;
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
