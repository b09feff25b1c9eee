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
// two slot-indexed Int32Array columns, the deadline a Float64Array one: 16 bytes per slot, as
// the heap's item, deadline and position columns were.
import { grownFloat, grownInt, SlotHeap } from './slot-heap.ts';

const NEVER = Number.POSITIVE_INFINITY;
/** Lease lengths that get a lane; a deployment uses a handful, the rest go to the heap. */
export const MAX_LANES = 16;
/**
 * `prev` of a slot with no deadline filed. Zero, so that columns grown for a large table need no
 * fill pass (a fill of millions of entries in one call blocked a standby's loop): a slot before
 * another in its lane is stored as its index + 1.
 */
const NOT_FILED = 0;
/** `prev` of a slot whose deadline is in the heap. */
const IN_HEAP = -2;
/** `prev` of a lane's head and `next` of its tail: the lane, coded below IN_HEAP. */
const laneEnd = (lane: number): number => -3 - lane;

export class SlotDeadlines {
  /** Each filed slot's deadline. */
  private due = new Float64Array(64);
  /** The slot before it in its lane plus 1, or laneEnd(lane) at the head; IN_HEAP, NOT_FILED. */
  private prev = new Int32Array(64);
  /** What reserve() said the columns will reach (0: not known). */
  private expected = 0;
  /** The slot after it in its lane, or laneEnd(lane) at the tail (in the heap: unused). */
  private next = new Int32Array(64);
  private readonly laneOf = new Map<number, number>();
  /** Each lane's lease length. */
  private readonly laneLease: number[] = [];
  /** Each lane's first and last slot, -1 when empty. */
  private readonly heads = new Int32Array(MAX_LANES).fill(-1);
  private readonly tails = new Int32Array(MAX_LANES).fill(-1);
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
    return this.has(slot) ? (this.due[slot] as number) : NEVER;
  }

  /**
   * Slots the columns are expected to reach (a standby told the size of the table coming; 0 when
   * not known): their first growth goes straight there instead of doubling to it, each doubling a
   * copy of every column in one call (CompactHolders.reserve).
   */
  reserve(slots: number): void {
    this.expected = slots;
    this.heap.reserve(slots);
  }

  /** Slots the columns have room for before they grow. */
  get capacity(): number {
    return this.prev.length;
  }

  has(slot: number): boolean {
    return slot < this.prev.length && this.prev[slot] !== NOT_FILED;
  }

  /** Files `slot` (not filed now) under `due`, in the lane of `leaseMs` when it keeps that lane in order. */
  push(slot: number, due: number, leaseMs: number): void {
    if (slot >= this.prev.length) this.grow(Math.max(2 * this.prev.length, slot + 1, this.expected));
    this.due[slot] = due;
    this.size++;
    const lane = leaseMs === this.lastLease ? this.lastLane : this.laneFor(leaseMs);
    if (lane < 0 || !this.append(slot, due, lane)) this.pushHeap(slot, due);
  }

  /** Files `slot` at the tail of `lane` if that keeps the lane in order; false if not. */
  private append(slot: number, due: number, lane: number): boolean {
    const tail = this.tails[lane] as number;
    if (tail < 0) {
      this.heads[lane] = slot;
      this.prev[slot] = laneEnd(lane);
      this.noteFiled(slot, due);
    } else if (due >= (this.due[tail] as number)) {
      // Not the lane's head, so not the earliest: its head is due no later.
      this.next[tail] = slot;
      this.prev[slot] = tail + 1;
    } else return false;
    this.next[slot] = laneEnd(lane);
    this.tails[lane] = slot;
    return true;
  }

  private pushHeap(slot: number, due: number): void {
    this.prev[slot] = IN_HEAP;
    this.heap.push(slot, due);
    this.noteFiled(slot, due);
  }

  /** Takes `slot`'s deadline out (nothing when it has none). */
  remove(slot: number): void {
    if (slot >= this.prev.length) return;
    const p = this.prev[slot] as number;
    if (p === NOT_FILED) return;
    this.prev[slot] = NOT_FILED;
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
    const n = this.next[slot] as number;
    if (p > 0) this.next[p - 1] = n;
    else this.heads[-3 - p] = n >= 0 ? n : -1;
    if (n >= 0) this.prev[n] = p;
    else if (p > 0) this.tails[-3 - n] = p - 1;
    else {
      // The lane is empty now: a length last found with no lane may take it.
      this.tails[-3 - n] = -1;
      if (this.lastLane < 0) this.lastLease = Number.NaN;
    }
  }

  /** Empties it at once: new columns, no pass over the old ones. */
  clear(): void {
    this.due = new Float64Array(64);
    this.prev = new Int32Array(64);
    this.next = new Int32Array(64);
    this.laneOf.clear();
    this.laneLease.length = 0;
    this.heads.fill(-1);
    this.tails.fill(-1);
    this.lastLease = Number.NaN;
    this.lastLane = -1;
    this.heap.clear();
    this.firstDue = NEVER;
    this.firstSlot = -1;
    this.firstKnown = true;
    this.size = 0;
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
      this.pushHeap(head, this.due[head] as number);
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
      const head = this.heads[lane] as number;
      if (head >= 0 && (this.due[head] as number) < firstDue) {
        first = head;
        firstDue = this.due[head] as number;
      }
    }
    this.firstSlot = first;
    this.firstDue = firstDue;
    this.firstKnown = true;
  }

  private grow(size: number): void {
    this.due = grownFloat(this.due, size);
    this.prev = grownInt(this.prev, size, 0);
    this.next = grownInt(this.next, size, 0);
  }
}
