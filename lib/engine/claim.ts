// A claim is one request for a lock: first a waiter in the lock's FIFO queue, then its holder,
// then ended. One object per request; the engine links it into its lock's queue and into the
// deadline heap directly (intrusive links), so queue moves and removals allocate nothing.
import type { HeapItem } from './deadline-heap.ts';
import type { LockState } from './lock-state.ts';

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
