// The compact holders' deadlines that no lane of slot-deadlines.ts takes (a lease length without
// a lane, a deadline out of its lane's order): the same 4-ary min-heap as deadline-heap.ts, over
// slot numbers instead of objects. A compact holder is a row of columns,
// not an object, so its place in the heap is a column too (`pos`, indexed by slot) and the heap
// itself is two paged columns (paged-columns.ts): the garbage collector walks none of it, and
// growing it never copies it (issue 29).
import { parentSlot } from './deadline-heap.ts';
import { Float64Pages, Int32Pages } from './paged-columns.ts';

const NEVER = Number.POSITIVE_INFINITY;

export class SlotHeap {
  private readonly items = new Int32Pages();
  private readonly dues = new Float64Pages();
  /** Each slot's index in the heap, -1 when not in it. */
  private readonly pos = new Int32Pages(-1);
  size = 0;

  /** The earliest deadline; +Infinity when the heap is empty. */
  peekDue(): number {
    return this.size === 0 ? NEVER : this.dues.get(0);
  }

  /** The slot due first; -1 when the heap is empty. */
  peek(): number {
    return this.size === 0 ? -1 : this.items.get(0);
  }

  /** The deadline `slot` is filed under; +Infinity when it is not in the heap. */
  dueOf(slot: number): number {
    const i = slot < this.pos.capacity ? this.pos.get(slot) : -1;
    return i < 0 ? NEVER : this.dues.get(i);
  }

  /** Entries the heap has room for before it takes another page. */
  get capacity(): number {
    return this.items.capacity;
  }

  has(slot: number): boolean {
    return slot < this.pos.capacity && this.pos.get(slot) >= 0;
  }

  push(slot: number, due: number): void {
    const i = this.size;
    this.items.ensure(i + 1);
    this.dues.ensure(i + 1);
    this.pos.ensure(slot + 1);
    this.size++;
    this.up(i, slot, due);
  }

  remove(slot: number): void {
    const i = slot < this.pos.capacity ? this.pos.get(slot) : -1;
    if (i < 0) return;
    this.pos.set(slot, -1);
    const n = --this.size;
    if (i === n) return;
    const last = this.items.get(n);
    const due = this.dues.get(n);
    this.down(i, last, due);
    this.up(this.pos.get(last), last, due);
  }

  /** Empties the heap at once: new columns, no pass over the old ones. */
  clear(): void {
    this.items.reset();
    this.dues.reset();
    this.pos.reset();
    this.size = 0;
  }

  private up(start: number, slot: number, due: number): void {
    const { items, dues, pos } = this;
    let i = start;
    while (i > 0) {
      const p = parentSlot(i);
      const parentDue = dues.get(p);
      if (parentDue <= due) break;
      const parent = items.get(p);
      items.set(i, parent);
      dues.set(i, parentDue);
      pos.set(parent, i);
      i = p;
    }
    items.set(i, slot);
    dues.set(i, due);
    pos.set(slot, i);
  }

  private down(start: number, slot: number, due: number): void {
    const { items, dues, pos } = this;
    const n = this.size;
    let i = start;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      const end = first + 4 < n ? first + 4 : n;
      let child = first;
      let childDue = dues.get(first);
      for (let k = first + 1; k < end; k++) {
        const d = dues.get(k);
        if (d < childDue) {
          childDue = d;
          child = k;
        }
      }
      if (childDue >= due) break;
      const c = items.get(child);
      items.set(i, c);
      dues.set(i, childDue);
      pos.set(c, i);
      i = child;
    }
    items.set(i, slot);
    dues.set(i, due);
    pos.set(slot, i);
  }
}
