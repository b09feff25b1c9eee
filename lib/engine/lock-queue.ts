// A lock's queue, kept out of the lock itself (claim.ts): a lock held with nobody waiting, the
// common case, carries none of it (issue 29: memory per held lock). A lock's LockQueue is made
// with its first waiter and dropped when its last one leaves; the waiters' own queue fields are
// their WaitLinks (claim-parts.ts).
//
// The queue is an intrusive doubly linked list through the waiters' WaitLinks, O(1) at both ends
// and for removal from the middle. Queue positions are answered in O(log k) without walking it:
// position = seq distance from the head minus the "holes" (waiters that left from the middle)
// in between, kept as a sorted array made only when a waiter first leaves from the middle.
//
// Generic over the claim type, so that this module imports nothing of claim.ts (which imports it).
import type { HandoverCause, Queued, WaitLinks } from './claim-parts.ts';

export class LockQueue<Claim extends Queued<Claim>> {
  head: Claim | null = null;
  tail: Claim | null = null;
  waiting = 0;
  private nextSeq = 0;
  /** Seqs of waiters that left from the middle, sorted; null until the first one does. */
  private holes: number[] | null = null;
  /**
   * When and why the last holder ended, for the handover latency of the next grant. Only a lock
   * with waiters has a next grant that is a handover, so the time is kept here, with them.
   */
  endedAt = 0;
  endCause: HandoverCause = 'release';

  /** `links` is the claim's (claim.ts makes them): the queue only threads them. */
  enqueue(claim: Claim, links: WaitLinks<Claim>): void {
    links.seq = this.nextSeq++;
    links.prev = this.tail;
    links.next = null;
    if (this.tail !== null) (this.tail.links as WaitLinks<Claim>).next = claim;
    else this.head = claim;
    this.tail = claim;
    this.waiting++;
  }

  /** Unlinks a waiter from anywhere in the queue; true when the queue is now empty. */
  unlink(claim: Claim, links: WaitLinks<Claim>): boolean {
    const wasHead = claim === this.head;
    const { prev, next } = links;
    if (prev !== null) (prev.links as WaitLinks<Claim>).next = next;
    else this.head = next;
    if (next !== null) (next.links as WaitLinks<Claim>).prev = prev;
    else this.tail = prev;
    links.prev = null;
    links.next = null;
    this.waiting--;
    if (this.head === null) return true;
    if (wasHead) {
      this.dropHolesBefore((this.head.links as WaitLinks<Claim>).seq);
    } else if (links.seq === this.nextSeq - 1) {
      // The tail left: nobody stands behind it, so its number is free again and leaves no hole.
      this.nextSeq = links.seq;
      if (this.holes !== null) this.holes.length = this.lowerBound(links.seq);
    } else {
      const holes = this.holes ?? [];
      this.holes = holes;
      holes.splice(this.lowerBound(links.seq), 0, links.seq);
      // Churn behind a head that stays must not grow the holes without bound: renumber the
      // queue once they outnumber the waiters (O(waiting), so amortized O(1) per removal).
      if (holes.length > this.waiting + 64) this.renumber();
    }
    return false;
  }

  private renumber(): void {
    let seq = 0;
    for (let c = this.head; c !== null; c = (c.links as WaitLinks<Claim>).next) (c.links as WaitLinks<Claim>).seq = seq++;
    this.nextSeq = seq;
    this.holes = null;
  }

  get holeCount(): number {
    return this.holes === null ? 0 : this.holes.length;
  }

  /** 1 = next in line; 0 when `links` are not in this queue's numbering (no head). */
  positionOf(links: WaitLinks<Claim>): number {
    if (this.head === null) return 0;
    return links.seq - (this.head.links as WaitLinks<Claim>).seq + 1 - this.lowerBound(links.seq);
  }

  private dropHolesBefore(seq: number): void {
    if (this.holes === null) return;
    const n = this.lowerBound(seq);
    if (n > 0) this.holes.splice(0, n);
  }

  /**
   * Written out rather than through lib/binary-search.ts: the engine imports nothing outside
   * itself but the token contract, and this runs on the lock path (no closure per search).
   */
  private lowerBound(seq: number): number {
    const h = this.holes;
    if (h === null) return 0;
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
