// The engine's event stream: every state change, in order. Metrics, the ops API's SSE feed
// and replication all read this one stream. `at` is the engine's monotonic clock (ms).
//
// A holder ends by exactly one of: release, expire, force-release.
// A waiter leaves the queue by exactly one of: grant, leave-queue (timeout, disconnect,
// expired), kick.
// A resumable session claim may detach from its connection and be resumed by another any
// number of times while it lives: neither ends it.
// A reset ends every claim at once, silently: the state was replaced (a standby took a fresh
// snapshot, or a node stopped serving). Readers re-read everything.
import type { HandoverCause, Protocol } from './claim.ts';

export interface GrantEvent {
  type: 'grant';
  at: number;
  lock: string;
  claimId: number;
  token: bigint;
  protocol: Protocol;
  client: string;
  /** The identity the client gave (claim.ts), or null. */
  clientName: string | null;
  leaseMs: number;
  sliding: boolean;
  /** Time spent in the queue (0 for an immediate grant). */
  waitedMs: number;
  /** Time from the previous holder's end to this grant, and what ended it; null when the lock was free. */
  handoverMs: number | null;
  handoverCause: HandoverCause | null;
}

/**
 * The holder a release, expiry or force-release ended, as the claim had it: so a reader that
 * lists ended grants (the console's per-lock history) needs nothing from the grant event and
 * does no work on the grant path.
 */
export interface EndedHolder {
  at: number;
  lock: string;
  claimId: number;
  token: bigint;
  protocol: Protocol;
  client: string;
  clientName: string | null;
  /** When this holder was granted (engine ms): its hold time is `at - grantedAt`. */
  grantedAt: number;
  /** How long it had waited in the queue before its grant (0 for an immediate grant). */
  waitedMs: number;
}

export interface ReleaseEvent extends EndedHolder {
  type: 'release';
  /** `disconnect`: the session closed, or the grant could not be delivered. */
  cause: 'release' | 'disconnect';
}

export interface ExpireEvent extends EndedHolder {
  type: 'expire';
  /**
   * The holder's last sign of life as the engine knew it: its last heartbeat (sliding lease) or
   * its grant (fixed lease), i.e. lease end minus lease. What an expiry cost its waiters is
   * counted from here (console charts), not from the timer.
   */
  lastAliveAt: number;
}

export interface ForceReleaseEvent extends EndedHolder {
  type: 'force-release';
}

export interface EnqueueEvent {
  type: 'enqueue';
  at: number;
  lock: string;
  claimId: number;
  protocol: Protocol;
  client: string;
  clientName: string | null;
  position: number;
  /** Absolute wait deadline on the engine clock, or null to wait forever. */
  waitDeadline: number | null;
}

export interface LeaveQueueEvent {
  type: 'leave-queue';
  at: number;
  lock: string;
  claimId: number;
  protocol: Protocol;
  reason: 'timeout' | 'disconnect' | 'expired';
}

export interface KickEvent {
  type: 'kick';
  at: number;
  lock: string;
  claimId: number;
  protocol: Protocol;
  /** The waiter's address, and how long it had waited: the lock's history lists kicked waiters. */
  client: string;
  waitedMs: number;
}

/**
 * A resumable session claim is kept without a connection, held or queued, for its client to
 * RESUME within its lease: its connection was reset under it, or a promotion carried it over
 * from the node that had it. Its lease runs on.
 */
export interface DetachEvent {
  type: 'detach';
  at: number;
  lock: string;
  claimId: number;
  protocol: Protocol;
}

/** A connection took up a detached resumable claim again (RESUME): its lease starts over. */
export interface ResumeEvent {
  type: 'resume';
  at: number;
  lock: string;
  claimId: number;
  protocol: Protocol;
}

export interface ResetEvent {
  type: 'reset';
  at: number;
  /**
   * The holders the reset ended (this node stopped serving them: a failover or a node that
   * stopped being active); empty when a standby's state was replaced by a snapshot, which ended
   * nothing the active still holds. `at` of each is the reset's.
   */
  ended: readonly EndedHolder[];
}

export type LockEvent =
  | GrantEvent
  | ReleaseEvent
  | ExpireEvent
  | ForceReleaseEvent
  | EnqueueEvent
  | LeaveQueueEvent
  | KickEvent
  | DetachEvent
  | ResumeEvent
  | ResetEvent;

/** Every event but a reset: each names one lock and one claim. */
export type ClaimEvent = Exclude<LockEvent, ResetEvent>;

export type LockEventListener = (event: LockEvent) => void;
