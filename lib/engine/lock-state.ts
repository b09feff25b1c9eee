// One named lock: its holder and, while anyone waits, its FIFO queue (lock-queue.ts). A lock held
// with nobody waiting is this object alone: its name, its holder, two flags in one field, and
// its place among the parked locks (lock-table.ts).
import type { Claim, HandoverCause } from './claim.ts';
import { LockQueue } from './lock-queue.ts';

const FILED = 1;
const PARKED = 2;

export class LockState {
  holder: Claim | null = null;
  /** The waiters, while there are any; null otherwise (most held locks). */
  private q: LockQueue | null = null;
  private bits = 0;
  parkedPrev: LockState | null = null;
  parkedNext: LockState | null = null;

  constructor(readonly name: string) {}

  get idle(): boolean {
    return this.holder === null && this.q === null;
  }

  /** The first waiter, next in line; null when nobody waits. */
  get head(): Claim | null {
    return this.q === null ? null : this.q.head;
  }

  get tail(): Claim | null {
    return this.q === null ? null : this.q.tail;
  }

  get waiting(): number {
    return this.q === null ? 0 : this.q.waiting;
  }

  /** In the engine's table under its name (lock-table.ts); false once dropped or replaced. */
  get filed(): boolean {
    return (this.bits & FILED) !== 0;
  }

  set filed(on: boolean) {
    this.bits = on ? this.bits | FILED : this.bits & ~FILED;
  }

  /** Idle and kept in the table for its next claim (lock-table.ts: parked locks), with its place in their list. */
  get parked(): boolean {
    return (this.bits & PARKED) !== 0;
  }

  set parked(on: boolean) {
    this.bits = on ? this.bits | PARKED : this.bits & ~PARKED;
  }

  /** When the last holder ended, for the handover latency of the next grant (0: none since it was last idle). */
  get endedAt(): number {
    return this.q === null ? 0 : this.q.endedAt;
  }

  get endCause(): HandoverCause {
    return this.q === null ? 'release' : this.q.endCause;
  }

  /**
   * The holder ended at `at` for `cause`. Kept only while someone waits: only a waiter's grant
   * is a handover, and a lock with nobody waiting is parked (and starts afresh) at once.
   */
  noteEnd(at: number, cause: HandoverCause): void {
    if (this.q === null) return;
    this.q.endedAt = at;
    this.q.endCause = cause;
  }

  enqueue(claim: Claim): void {
    if (this.q === null) this.q = new LockQueue();
    this.q.enqueue(claim, claim.waitLinks());
  }

  /** Unlinks a waiter from anywhere in the queue. */
  unlink(claim: Claim): void {
    if (this.q !== null && claim.links !== null && this.q.unlink(claim, claim.links)) this.q = null;
  }

  /** Bookkeeping size for the position index (bounded by the number of waiters plus a constant). */
  get holeCount(): number {
    return this.q === null ? 0 : this.q.holeCount;
  }

  /** 1 = next in line. */
  positionOf(claim: Claim): number {
    return this.q === null || claim.links === null ? 0 : this.q.positionOf(claim.links);
  }

  /** Waiters in FIFO order (for operators; O(n)). */
  queue(): Claim[] {
    const out: Claim[] = [];
    for (let c = this.head; c !== null; c = c.next) out.push(c);
    return out;
  }
}
