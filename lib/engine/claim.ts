// A claim is one request for a lock: first a waiter in the lock's FIFO queue, then its holder,
// then ended. One object per request; the engine links it into its lock's queue and into the
// deadline heap directly (intrusive links), so queue moves and removals allocate nothing.
// A claim and its lock point at each other, so both live in this one module (no import cycle).
import type { HeapItem } from './deadline-heap.ts';

export type Protocol = 'keyed' | 'session';
export type ClaimState = 'waiting' | 'holding' | 'ended';

/** Why the engine (not the owner) ended a claim. */
export type EndReason = 'wait-timeout' | 'expired' | 'force-released' | 'kicked';

/**
 * The connection (or in-process caller) a claim belongs to. One object per connection, not a
 * closure per request.
 */
export interface ClaimOwner {
  /**
   * The claim now holds its lock. Return false when the grant cannot be delivered (the
   * connection is gone): the engine then releases it at once and hands the lock on.
   */
  onGranted(claim: Claim): boolean;
  /** The engine ended the claim for `reason`; not called for ends the owner asked for. */
  onEnded(claim: Claim, reason: EndReason): void;
  /**
   * Set on owners that stand for no connection (a replicated claim, a session claim between
   * connections): a resumable claim with such an owner may be taken up by RESUME (lock-engine.ts).
   */
  readonly detached?: true;
  /** Set on the owner of claims kept for their clients to come back (not a standby's mirror): for operators, "reconnecting". */
  readonly awaitingResume?: true;
  /** A detached claim of this owner was taken up by a connection again. */
  onResumed?(claim: Claim): void;
}

/**
 * One call of LockEngine.acquire, by name rather than by position. The engine reads it during the
 * call and keeps nothing of it (the claim gets its own fields), so a caller on a hot path may
 * fill one object per connection and pass it again for every request.
 */
export interface AcquireRequest {
  /** The lock's name. */
  readonly name: string;
  /** Who hears of the grant and of ends the owner did not ask for. */
  readonly owner: ClaimOwner;
  readonly protocol: Protocol;
  /** Peer address, for operators ("127.0.0.1:53122"). */
  readonly client: string;
  /** The name the client gave itself (keyed `I`, session `CLIENT`), for operators; null or absent: none. */
  readonly clientName?: string | null;
  /** Lease length; must be positive and finite. */
  readonly leaseMs: number;
  /** How long the claim may wait in the queue; 0 waits forever. */
  readonly waitMs: number;
  /** A sliding lease (sessions): every sign of life restarts it, queued or holding. */
  readonly sliding: boolean;
  /** Owner-defined number (Claim.tag); 0 if not given. */
  readonly tag?: number;
  /** SHA-256 (hex) of a session's claim key: the claim is resumable (LockEngine.resume). */
  readonly keyHash?: string | null;
}

export class Claim implements HeapItem {
  due = Number.POSITIVE_INFINITY;
  heapIndex = -1;
  state: ClaimState = 'waiting';
  token = 0n;
  /** Enqueue order within the lock, for queue positions. */
  seq = 0;
  prev: Claim | null = null;
  next: Claim | null = null;
  grantedAt = 0;
  /** Lease end: grant + lease (fixed), or last sign of life + lease (sliding). */
  expiresAt = Number.POSITIVE_INFINITY;
  /** Absolute wait deadline while queued; +Infinity waits forever. */
  waitDeadline = Number.POSITIVE_INFINITY;
  /**
   * SHA-256 (hex) of the claim key of a session that opted in to resuming, else null. Only the
   * hash is kept: the key is the client's credential and is never stored, logged or shown.
   */
  keyHash: string | null = null;
  /** Already in the engine's list of renewals to replicate (see LockEngine.takeRenewals). */
  renewQueued = false;
  /** The name the client gave itself ("worker-7@host-3 pid 4121"), or null; set once, at acquire. */
  clientName: string | null = null;

  constructor(
    readonly id: number,
    readonly lock: LockState,
    /** Changes only for a resumable claim: detached from its connection, or taken up by another. */
    public owner: ClaimOwner,
    readonly protocol: Protocol,
    /** Peer address, for operators ("127.0.0.1:53122"). */
    readonly client: string,
    readonly leaseMs: number,
    readonly sliding: boolean,
    readonly enqueuedAt: number,
    /** Owner-defined number (e.g. the request's sequence on its connection). */
    readonly tag: number,
  ) {}

  get name(): string {
    return this.lock.name;
  }
}

// One named lock: its holder and its FIFO queue of waiters (an intrusive doubly linked list,
// O(1) at both ends and for removal from the middle). Queue positions are answered in
// O(log k) without walking the queue: position = seq distance from the head minus the
// "holes" (waiters that left from the middle) in between, kept as a sorted array.
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
  /** In the engine's table under its name (lock-table.ts); false once dropped or replaced. */
  filed = false;
  /** Idle and kept in the table for its next claim (lock-table.ts: parked locks), with its place in their list. */
  parked = false;
  parkedPrev: LockState | null = null;
  parkedNext: LockState | null = null;

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

  /**
   * Written out rather than through lib/binary-search.ts: the engine imports nothing outside
   * itself but the token contract, and this runs on the lock path (no closure per search).
   */
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
