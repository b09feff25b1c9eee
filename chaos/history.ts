// What a chaos run records, in one shape that the pure checker reads. Every time is in epoch
// milliseconds with sub-millisecond precision, taken as performance.timeOrigin + performance.now()
// in whichever process saw the event (the runner, a client worker): one monotonic clock per
// process, all anchored to the same system clock, so events of different processes compare.
// The nodes' failover timeline is in Date.now() of the node, the same system clock.
import type { FailoverView } from '../lib/ops-api/api-types.ts';

/** The time of an event in this process: performance.timeOrigin + performance.now() (see above). */
export const now = (): number => performance.timeOrigin + performance.now();

export type ClientProtocol = 'keyed' | 'session';

/** What a client saw. `client` names one incarnation of one client (a restarted worker's clients get new names). */
export type ClientEvent =
  /** The client started to queue for `lock`. */
  | { kind: 'acquire'; t: number; client: string; lock: string; protocol: ClientProtocol }
  /** The grant arrived: from here the client holds `lock`. */
  | { kind: 'grant'; t: number; client: string; lock: string; protocol: ClientProtocol; token: string; leaseMs: number }
  /** The acquire gave up (timeout, connection trouble) without a grant. */
  | { kind: 'acquire-failed'; t: number; client: string; lock: string; reason: string }
  /** The client is about to send its release (keyed `R`, session close): from here it no longer holds. */
  | { kind: 'release'; t: number; client: string; lock: string; token: string }
  /** How the release ended: `ok`, `stale` (keyed: the token no longer held the lock) or `error`. */
  | { kind: 'released'; t: number; client: string; lock: string; token: string; outcome: 'ok' | 'stale' | 'error' }
  /** The client learned it no longer holds (a session's lease.signal aborted): it stops here. */
  | { kind: 'lost'; t: number; client: string; lock: string; token: string; reason: string }
  /** The runner killed this client's process (kill -9): whatever it held, it holds no more. */
  | { kind: 'killed'; t: number; client: string }
  /**
   * A session client said its claim survived a handoff or failover with this token (a client
   * that can resume its claim may report it; the checker does not need it: a hold that outlives
   * a fault with the same token and no abort counts as carried over either way).
   */
  | { kind: 'resumed'; t: number; client: string; lock: string; token: string }
  /**
   * This client's process did not run from `t` to `until` (a timer ticking every 20 ms came that
   * late: CPU starvation, a GC pause). What it saw meanwhile it saw late: a grant may have been
   * made, and even have expired, long before the client noticed it.
   */
  | { kind: 'stall'; t: number; client: string; until: number };

export type WriteOutcome = 'accepted' | 'stale' | 'conflict';

/** One attempt to write the protected resource, as the resource recorded it. */
export interface ResourceWrite {
  t: number;
  lock: string;
  client: string;
  token: string;
  /** The value the client read before (the read-modify-write's expectation). */
  expected: number;
  value: number;
  /** stale: token below the highest accepted; conflict: token fine but the value was not `expected` (not applied). */
  outcome: WriteOutcome;
  /** The highest token accepted on this lock before this write; null if none yet. */
  highestBefore: string | null;
}

export type FaultKind = 'kill9' | 'sigterm' | 'api-handoff' | 'partition' | 'pause' | 'client-kill' | EtcdFaultKind;

/** Faults of etcd mode: a Baton node cut from etcd, an etcd member killed, etcd's quorum lost (two members killed). */
export type EtcdFaultKind = 'etcd-cut' | 'etcd-member-kill' | 'etcd-quorum-loss';

export const ETCD_FAULT_KINDS: readonly FaultKind[] = ['etcd-cut', 'etcd-member-kill', 'etcd-quorum-loss'];

/** A fault as applied: from the moment it was injected until it was undone (node back, link healed, process resumed). */
export interface FaultWindow {
  kind: FaultKind;
  /** The node(s) or client group it hit, e.g. "a", "a+b", "g2". */
  target: string;
  start: number;
  end: number;
  /**
   * Whether the node(s) hit include the node that was active when the fault began (an API
   * handoff always does; undefined for a client kill, or when it was not known: counted as yes).
   */
  hitActive?: boolean;
  /** A partition: what the nodes made of it (e.g. "actives a+b before the heal"). */
  observed?: string;
}

export interface FinalLock {
  name: string;
  holder: string | null;
  queueLength: number;
}

/** The cluster after every client was stopped and the leases had time to run out. */
export interface FinalState {
  active: string | null;
  locks: FinalLock[];
  /** Set when the final state could not be read (no active node answered). */
  error?: string;
}

export interface History {
  clientEvents: ClientEvent[];
  writes: ResourceWrite[];
  faults: FaultWindow[];
  failovers: FailoverView[];
  final: FinalState;
  /** The longest lease any client asked for (ms). */
  maxLeaseMs: number;
  /** The cluster's --peer-timeout (ms). */
  peerTimeoutMs: number;
  /** When the clients started and when they were told to stop. */
  runStart: number;
  runEnd: number;
  /**
   * Set when the cluster ran in etcd mode (`--coordination etcd`): the checker then excuses no
   * fault window (history-checker.ts, "etcd mode"). Absent: the default (peers) mode.
   */
  coordination?: { mode: 'etcd'; leaseTtlMs: number };
}
