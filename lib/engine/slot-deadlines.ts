// The deadlines of the compact holders (compact-holders.ts), by slot: one FIFO lane per lease
// length, and a heap (slot-heap.ts) for the rest. A compact holder's lease is fixed, so holders of
// one lease length, granted in clock order, fall due in the order they were granted: a lane is a
// list in grant order, appended at its tail and taken from anywhere in O(1), whatever the table's
// size. The earliest deadline is the earliest of the lanes' heads and the heap's top, found by a
// scan of the few lanes only when the one it was has left.
//
// Why not the heap alone (issue 29): with 5,000,000 locks held for 600 s, each 30 s grant climbed
// 11 levels of the 4-ary heap and each release sank the heap's last entry as far, cache misses
// over 80 MB of columns per pair, a tenth of the daemon's CPU per pair. A lane touches the slot
// and its two neighbours, which in a churn of short leases are the other recent grants.
//
// A deadline goes to the heap when its lease length has no lane (more than MAX_LANES lengths
// held at once, and no lane of a single deadline to take over) or when it is earlier than its
// lane's tail (a clock that stepped back, or a standby's grant filed with the end its active
// reported): each lane is in order by construction, never by assumption. The lanes' links are
// two slot-indexed Int32 columns, the deadline a Float64 one: 16 bytes per slot, as the heap's
// item, deadline and position columns were. The columns are in pages of rows (LanePage, on
// paged-columns.ts RowPages): growing them to millions of slots adds pages and copies nothing.
import { PAGE_BITS, PAGE_MASK, RowPages } from './paged-columns.ts';
import { SlotHeap } from './slot-heap.ts';

const NEVER = Number.POSITIVE_INFINITY;
/** Lease lengths that get a lane; a deployment uses a handful, the rest go to the heap. */
export const MAX_LANES = 16;
/** `prev` of a slot with no deadline filed. */
const NOT_FILED = -1;
/** `prev` of a slot whose deadline is in the heap. */
const IN_HEAP = -2;
/** `prev` of a lane's head and `next` of its tail: the lane, coded below IN_HEAP. */
const laneEnd = (lane: number): number => -3 - lane;

/** The deadline columns of PAGE_ROWS consecutive slots. */
class LanePage {
  /** Each filed slot's deadline. */
  readonly due: Float64Array<ArrayBuffer>;
  /** The slot before it in its lane, or laneEnd(lane) at the head; IN_HEAP, NOT_FILED. */
  readonly prev: Int32Array<ArrayBuffer>;
  /** The slot after it in its lane, or laneEnd(lane) at the tail (in the heap: unused). */
  readonly next: Int32Array<ArrayBuffer>;

  constructor(rows: number) {
    this.due = new Float64Array(rows);
    this.prev = new Int32Array(rows).fill(NOT_FILED);
    this.next = new Int32Array(rows);
  }

  static grownFrom(from: LanePage, rows: number): LanePage {
    const page = new LanePage(rows);
    page.due.set(from.due);
    page.prev.set(from.prev);
    page.next.set(from.next);
    return page;
  }
}

export class SlotDeadlines {
  private readonly rows = new RowPages(
    (n) => new LanePage(n),
    (from: LanePage, n) => LanePage.grownFrom(from, n),
  );
  private readonly laneOf = new Map<number, number>();
  /** Each lane's lease length. */
  private readonly laneLease: number[] = [];
  /** Each lane's first and last slot, -1 when empty. */
  private readonly heads = new Int32Array(MAX_LANES).fill(-1);
  private readonly tails = new Int32Array(MAX_LANES).fill(-1);
  /** Each lane's head's deadline (+Infinity when empty): the earliest is found without reading a page per lane. */
  private readonly headDues = new Float64Array(MAX_LANES).fill(NEVER);
  /** The last lease length looked up, and its lane (a run of grants mostly has one length). */
  private lastLease = Number.NaN;
  private lastLane = -1;
  private readonly heap = new SlotHeap();
  /** The earliest deadline and its slot, while `firstKnown`. */
  private firstDue = NEVER;
  private firstSlot = -1;
  private firstKnown = true;
  size = 0;

  /** The earliest deadline; +Infinity when none is filed. */
  peekDue(): number {
    if (!this.firstKnown) this.findFirst();
    return this.firstDue;
  }

  /** The slot due first; -1 when none is filed. */
  peek(): number {
    if (!this.firstKnown) this.findFirst();
    return this.firstSlot;
  }

  /** The deadline `slot` is filed under; +Infinity when it is not filed. */
  dueOf(slot: number): number {
    return this.has(slot) ? (this.page(slot).due[slot & PAGE_MASK] as number) : NEVER;
  }

  has(slot: number): boolean {
    return slot < this.rows.capacity && this.page(slot).prev[slot & PAGE_MASK] !== NOT_FILED;
  }

  /** Files `slot` (not filed now) under `due`, in the lane of `leaseMs` when it keeps that lane in order. */
  push(slot: number, due: number, leaseMs: number): void {
    if (slot >= this.rows.capacity) this.rows.ensure(slot + 1);
    this.page(slot).due[slot & PAGE_MASK] = due;
    this.size++;
    const lane = leaseMs === this.lastLease ? this.lastLane : this.laneFor(leaseMs);
    if (lane < 0 || !this.append(slot, due, lane)) this.pushHeap(slot, due);
  }

  /** Files `slot` at the tail of `lane` if that keeps the lane in order; false if not. */
  private append(slot: number, due: number, lane: number): boolean {
    const tail = this.tails[lane] as number;
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    if (tail < 0) {
      this.heads[lane] = slot;
      this.headDues[lane] = due;
      page.prev[r] = laneEnd(lane);
      this.noteFiled(slot, due);
    } else {
      const tailPage = this.page(tail);
      // Not the lane's head, so not the earliest: its head is due no later.
      if (due < (tailPage.due[tail & PAGE_MASK] as number)) return false;
      tailPage.next[tail & PAGE_MASK] = slot;
      page.prev[r] = tail;
    }
    page.next[r] = laneEnd(lane);
    this.tails[lane] = slot;
    return true;
  }

  private pushHeap(slot: number, due: number): void {
    this.page(slot).prev[slot & PAGE_MASK] = IN_HEAP;
    this.heap.push(slot, due);
    this.noteFiled(slot, due);
  }

  /** Takes `slot`'s deadline out (nothing when it has none). */
  remove(slot: number): void {
    if (slot >= this.rows.capacity) return;
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    const p = page.prev[r] as number;
    if (p === NOT_FILED) return;
    page.prev[r] = NOT_FILED;
    this.size--;
    if (slot === this.firstSlot) {
      // The earliest left: the next is found on the next look, unless nothing is left.
      this.firstKnown = this.size === 0;
      this.firstSlot = -1;
      this.firstDue = NEVER;
    }
    if (p === IN_HEAP) {
      this.heap.remove(slot);
      return;
    }
    const n = page.next[r] as number;
    if (p >= 0) this.page(p).next[p & PAGE_MASK] = n;
    else {
      this.heads[-3 - p] = n >= 0 ? n : -1;
      this.headDues[-3 - p] = n >= 0 ? this.dueAt(n) : NEVER;
    }
    if (n >= 0) this.page(n).prev[n & PAGE_MASK] = p;
    else if (p >= 0) this.tails[-3 - n] = p;
    else {
      // The lane is empty now: a length last found with no lane may take it.
      this.tails[-3 - n] = -1;
      if (this.lastLane < 0) this.lastLease = Number.NaN;
    }
  }

  /** Empties it at once: new columns, no pass over the old ones. */
  clear(): void {
    this.rows.reset();
    this.laneOf.clear();
    this.laneLease.length = 0;
    this.heads.fill(-1);
    this.tails.fill(-1);
    this.headDues.fill(NEVER);
    this.lastLease = Number.NaN;
    this.lastLane = -1;
    this.heap.clear();
    this.firstDue = NEVER;
    this.firstSlot = -1;
    this.firstKnown = true;
    this.size = 0;
  }

  /**
   * The latest deadline filed; -Infinity when none is. A pass over the columns (typed arrays, no
   * object per slot): for a rare question (the etcd mode's clean stop, lease-horizon.ts).
   */
  latestDue(): number {
    let latest = Number.NEGATIVE_INFINITY;
    if (this.size === 0) return latest;
    const capacity = this.rows.capacity;
    for (let p = 0; p < this.rows.pages.length; p++) {
      const page = this.rows.pages[p] as LanePage;
      const rows = Math.min(page.prev.length, capacity - (p << PAGE_BITS));
      for (let r = 0; r < rows; r++) {
        if (page.prev[r] === NOT_FILED) continue;
        const due = page.due[r] as number;
        if (due > latest) latest = due;
      }
    }
    return latest;
  }

  /** The lane of `leaseMs`: its own, a new one, an empty one taken over, or -1 (the heap). */
  private laneFor(leaseMs: number): number {
    let lane = this.laneOf.get(leaseMs);
    if (lane === undefined) {
      lane = this.laneLease.length < MAX_LANES ? this.laneLease.length : this.heads.indexOf(-1);
      if (lane < 0) lane = this.soloLane();
      if (lane >= 0) {
        if (lane < this.laneLease.length) this.laneOf.delete(this.laneLease[lane] as number);
        this.laneLease[lane] = leaseMs;
        this.laneOf.set(leaseMs, lane);
      }
    }
    // A length with no lane is remembered too (-1), until a lane empties (remove).
    this.lastLease = leaseMs;
    this.lastLane = lane;
    return lane;
  }

  /**
   * A lane holding one deadline, emptied for another length (its deadline moves to the heap), or
   * -1. Lanes go to lengths first come, so a few long leases of rare lengths would otherwise keep
   * every lane, and a busy length would go to the heap for as long as they hold.
   */
  private soloLane(): number {
    for (let lane = 0; lane < MAX_LANES; lane++) {
      const head = this.heads[lane] as number;
      if (head < 0 || head !== this.tails[lane]) continue;
      this.heads[lane] = -1;
      this.tails[lane] = -1;
      this.headDues[lane] = NEVER;
      this.pushHeap(head, this.dueAt(head));
      return lane;
    }
    return -1;
  }

  /** A slot filed where it may be the earliest (a lane's head, or the heap). */
  private noteFiled(slot: number, due: number): void {
    if (this.firstKnown && due < this.firstDue) {
      this.firstDue = due;
      this.firstSlot = slot;
    }
  }

  /** The earliest of the heap's top and the lanes' heads. */
  private findFirst(): void {
    let first = this.heap.peek();
    let firstDue = this.heap.peekDue();
    for (let lane = 0; lane < this.laneLease.length; lane++) {
      const due = this.headDues[lane] as number;
      if (due < firstDue) {
        first = this.heads[lane] as number;
        firstDue = due;
      }
    }
    this.firstSlot = first;
    this.firstDue = firstDue;
    this.firstKnown = true;
  }

  /** The deadline filed for `slot` (filed, so below capacity). */
  private dueAt(slot: number): number {
    return this.page(slot).due[slot & PAGE_MASK] as number;
  }

  /** The page of a slot below capacity. */
  private page(slot: number): LanePage {
    return this.rows.pages[slot >>> PAGE_BITS] as LanePage;
  }
}
