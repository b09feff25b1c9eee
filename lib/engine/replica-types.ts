// What a standby's replica operations (replica-ops.ts) are given: the active's grants and
// waiters as its stream describes them, and how a holder ended or a waiter left.
import type { Protocol } from './claim.ts';
import type { GrantEvent } from './events.ts';

/** A grant as the active's event stream describes it, with where its lease stands now. */
export interface ReplicaGrant extends Omit<GrantEvent, 'type' | 'at' | 'waitedMs' | 'clientName'> {
  /** The identity the client gave, or null (absent: none). */
  clientName?: string | null;
  /** Lease left on the active, counted from now. */
  remainingMs: number;
  /** How long the claim has held already (0 for a grant seen live). */
  heldForMs: number;
  /** SHA-256 (hex) of the session's claim key when it opted in to resuming. */
  keyHash?: string | null;
}

export interface ReplicaWaiter {
  lock: string;
  claimId: number;
  protocol: Protocol;
  client: string;
  /** The identity the client gave, or null (absent: none). */
  clientName?: string | null;
  leaseMs: number;
  sliding: boolean;
  waitingForMs: number;
  /** Wait left, counted from now; null waits forever. */
  waitRemainingMs: number | null;
  /** SHA-256 (hex) of the session's claim key when it opted in to resuming. */
  keyHash?: string | null;
}

export type ReplicaHolderEnd = 'release' | 'disconnect' | 'expire' | 'force-release';
export type ReplicaQueueLeave = 'timeout' | 'disconnect' | 'expired' | 'kick';
