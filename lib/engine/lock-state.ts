// One named lock: its holder and its FIFO queue of waiters (an intrusive doubly linked list,
// O(1) at both ends and for removal from the middle). Queue positions are answered in
// O(log k) without walking the queue: position = seq distance from the head minus the
// "holes" (waiters that left from the middle) in between, kept as a sorted array.
import type { Claim } from './claim.ts';

export type HandoverCause = 'release' | 'disconnect' | 'expiry' | 'force-release';

export class LockState {
  holder: Claim | null = null;
  head: Claim | null = null;
  tail: Claim | null = null;
  waiting = 0;
  private nextSeq = 0;
  private holes: number[] = [];
  /** When and why the last holder ended, for the handover latency of the next grant. */
  endedAt = 0;
  endCause: HandoverCause = 'release';

  constructor(readonly name: string) {}

  get idle(): boolean {
    return this.holder === null && this.head === null;
  }

  enqueue(claim: Claim): void {
    claim.seq = this.nextSeq++;
    claim.prev = this.tail;
    claim.next = null;
    if (this.tail) this.tail.next = claim;
    else this.head = claim;
    this.tail = claim;
    this.waiting++;
  }

  /** Unlinks a waiter from anywhere in the queue. */
  unlink(claim: Claim): void {
    const wasHead = claim === this.head;
    if (claim.prev) claim.prev.next = claim.next;
    else this.head = claim.next;
    if (claim.next) claim.next.prev = claim.prev;
    else this.tail = claim.prev;
    claim.prev = null;
    claim.next = null;
    this.waiting--;
    if (this.head === null) {
      this.holes.length = 0;
      this.nextSeq = 0;
    } else if (wasHead) {
      this.dropHolesBefore(this.head.seq);
    } else if (claim.seq === this.nextSeq - 1) {
      // The tail left: nobody stands behind it, so its number is free again and leaves no hole.
      this.nextSeq = claim.seq;
      this.dropHolesFrom(claim.seq);
    } else {
      this.holes.splice(this.lowerBound(claim.seq), 0, claim.seq);
      // Churn behind a head that stays must not grow the holes without bound: renumber the
      // queue once they outnumber the waiters (O(waiting), so amortized O(1) per removal).
      if (this.holes.length > this.waiting + 64) this.renumber();
    }
  }

  private renumber(): void {
    let seq = 0;
    for (let c = this.head; c !== null; c = c.next) c.seq = seq++;
    this.nextSeq = seq;
    this.holes.length = 0;
  }

  private dropHolesFrom(seq: number): void {
    this.holes.length = this.lowerBound(seq);
  }

  /** Bookkeeping size for the position index (bounded by the number of waiters plus a constant). */
  get holeCount(): number {
    return this.holes.length;
  }

  /** 1 = next in line. */
  positionOf(claim: Claim): number {
    if (!this.head) return 0;
    return claim.seq - this.head.seq + 1 - this.lowerBound(claim.seq);
  }

  /** Waiters in FIFO order (for operators; O(n)). */
  queue(): Claim[] {
    const out: Claim[] = [];
    for (let c = this.head; c; c = c.next) out.push(c);
    return out;
  }

  private dropHolesBefore(seq: number): void {
    const n = this.lowerBound(seq);
    if (n > 0) this.holes.splice(0, n);
  }

  private lowerBound(seq: number): number {
    const h = this.holes;
    let lo = 0;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((h[mid] as number) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
