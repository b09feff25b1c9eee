// The compact holders' deadlines that no lane of slot-deadlines.ts takes (a lease length without
// a lane, a deadline out of its lane's order): the same 4-ary min-heap as deadline-heap.ts, over
// slot numbers instead of objects. A compact holder is a row of columns,
// not an object, so its place in the heap is a column too (`pos`, indexed by slot) and the heap
// itself is two typed arrays: the garbage collector walks none of it (issue 29).
import { parentSlot } from './deadline-heap.ts';

const NEVER = Number.POSITIVE_INFINITY;

export class SlotHeap {
  private items = new Int32Array(64);
  private dues = new Float64Array(64);
  /** Each slot's index in the heap, -1 when not in it. */
  private pos = new Int32Array(64).fill(-1);
  size = 0;
  /** What reserve() said the heap will reach. */
  private expected = 0;

  /** The earliest deadline; +Infinity when the heap is empty. */
  peekDue(): number {
    return this.size === 0 ? NEVER : (this.dues[0] as number);
  }

  /** The slot due first; -1 when the heap is empty. */
  peek(): number {
    return this.size === 0 ? -1 : (this.items[0] as number);
  }

  /** The deadline `slot` is filed under; +Infinity when it is not in the heap. */
  dueOf(slot: number): number {
    const i = slot < this.pos.length ? (this.pos[slot] as number) : -1;
    return i < 0 ? NEVER : (this.dues[i] as number);
  }

  /**
   * Entries and slots the heap is expected to reach (0: not known): its first growth goes
   * straight there instead of doubling to it, each doubling a copy of every column in one call
   * (CompactHolders.reserve: a standby told the size of the table coming).
   */
  reserve(slots: number): void {
    this.expected = slots;
  }

  /** Entries the heap has room for before it grows. */
  get capacity(): number {
    return this.items.length;
  }

  has(slot: number): boolean {
    return slot < this.pos.length && (this.pos[slot] as number) >= 0;
  }

  push(slot: number, due: number): void {
    const i = this.size;
    if (i === this.items.length) {
      this.items = grownInt(this.items, Math.max(2 * i, this.expected), 0);
      this.dues = grownFloat(this.dues, Math.max(2 * i, this.expected));
    }
    // `pos` still doubles: grown to the expected size at once, its fill of -1 wrote every page of
    // it in one call (over 100 ms at 5 M slots on the standby's first grant).
    if (slot >= this.pos.length) this.pos = grownInt(this.pos, Math.max(2 * this.pos.length, slot + 1), -1);
    this.size++;
    this.up(i, slot, due);
  }

  remove(slot: number): void {
    const i = slot < this.pos.length ? (this.pos[slot] as number) : -1;
    if (i < 0) return;
    this.pos[slot] = -1;
    const n = --this.size;
    if (i === n) return;
    const last = this.items[n] as number;
    const due = this.dues[n] as number;
    this.down(i, last, due);
    this.up(this.pos[last] as number, last, due);
  }

  /** Empties the heap at once: new arrays, no pass over the old ones. */
  clear(): void {
    this.items = new Int32Array(64);
    this.dues = new Float64Array(64);
    this.pos = new Int32Array(64).fill(-1);
    this.size = 0;
  }

  private up(start: number, slot: number, due: number): void {
    const items = this.items;
    const dues = this.dues;
    const pos = this.pos;
    let i = start;
    while (i > 0) {
      const p = parentSlot(i);
      const parentDue = dues[p] as number;
      if (parentDue <= due) break;
      const parent = items[p] as number;
      items[i] = parent;
      dues[i] = parentDue;
      pos[parent] = i;
      i = p;
    }
    items[i] = slot;
    dues[i] = due;
    pos[slot] = i;
  }

  private down(start: number, slot: number, due: number): void {
    const items = this.items;
    const dues = this.dues;
    const pos = this.pos;
    const n = this.size;
    let i = start;
    for (;;) {
      const first = 4 * i + 1;
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
      const c = items[child] as number;
      items[i] = c;
      dues[i] = childDue;
      pos[c] = i;
      i = child;
    }
    items[i] = slot;
    dues[i] = due;
    pos[slot] = i;
  }
}

export function grownInt(a: Int32Array<ArrayBuffer>, size: number, fill: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(size);
  if (fill !== 0) out.fill(fill, a.length);
  out.set(a);
  return out;
}

export function grownFloat(a: Float64Array<ArrayBuffer>, size: number): Float64Array<ArrayBuffer> {
  const out = new Float64Array(size);
  out.set(a);
  return out;
}
