// The JSON shapes of the ops API (`/api/v1`) and of its server-sent events. The server builds
// them and the dashboard reads them, so both sides import this one file. Fencing tokens and
// claim ids travel as decimal strings (a u64 does not fit a JSON number); times are epoch
// milliseconds, durations are milliseconds.
import type { HandoverCause } from '../engine/claim.ts';
// The cluster's vocabulary is defined with the cluster's rules (lib/cluster); the shapes below
// use it, and the types are re-exported for the code that reads these shapes.
import type { FailoverCause, NodePhase, NodeRole } from './cluster-vocabulary.ts';

export type { FailoverCause, NodePhase, NodeRole };

export type Protocol = 'keyed' | 'session';
export type DaemonState = 'starting' | 'serving' | 'draining';
export type { HandoverCause };
export const HANDOVER_CAUSES: readonly HandoverCause[] = ['release', 'disconnect', 'expiry', 'force-release'];

export interface HolderView {
  /** The claim's id (decimal string). */
  claimId: string;
  protocol: Protocol;
  /** The client's address, "127.0.0.1:53122". */
  client: string;
  /** The identity the client gave ("worker-7@host-3 pid 4121"; keyed `I`, session `CLIENT`); null when it sent none. */
  clientName: string | null;
  /** Fencing token (decimal u64). */
  token: string;
  grantedAt: number;
  heldForMs: number;
  leaseMs: number;
  /** Session-protocol leases slide with each heartbeat. */
  sliding: boolean;
  /** Lease left at `asOf` of the enclosing message; the dashboard counts it down locally. */
  leaseRemainingMs: number;
  /**
   * A resumable session claim between connections (its node handed off or died): kept for its
   * client to RESUME until its lease (`leaseRemainingMs`) runs out. Absent when connected.
   */
  reconnecting?: true;
}

export interface LockSummary {
  name: string;
  holder: HolderView | null;
  queueLength: number;
}

export interface WaiterView {
  /** The waiter's claim id (decimal string): the `{id}` of the kick route. */
  id: string;
  /** 1 = next in line. */
  position: number;
  protocol: Protocol;
  client: string;
  /** The identity the client gave; null when it sent none. */
  clientName: string | null;
  waitingSince: number;
  waitingForMs: number;
  /** When the waiter gives up; null waits forever. */
  waitDeadline: number | null;
  /** A resumable session waiter between connections, keeping its place until this much lease is left. */
  reconnecting?: true;
  reconnectRemainingMs?: number;
}

/**
 * `GET /api/v1/locks/{name}?limit=&after=`: the lock with one page of its queue. `queueLength`
 * (from LockSummary) is the whole queue's length, the page's total.
 */
export interface LockDetail extends LockSummary {
  asOf: number;
  /** One page of the queue in FIFO order (the first waiter gets the lock next): `limit` waiters at most, after the `after` waiter. */
  queue: WaiterView[];
  /** The last waiter's id when more of the queue follows: pass it as `after` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface LocksPage {
  asOf: number;
  locks: LockSummary[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface ReplicationLag {
  events: number;
  ms: number;
}

export interface NodeView {
  id: string;
  role: NodeRole;
  /** 0 = highest (front of the peers list). */
  priority: number;
  self: boolean;
  alive: boolean;
  /** Last heartbeat seen from the node (now, for this node); null if never seen. */
  lastSeen: number | null;
  /** Standbys only, once clustered. */
  replicationLag: ReplicationLag | null;
  /** Synced with the active node (the active itself counts as in sync). */
  inSync: boolean;
  /** Gave the active role away by an API handoff: does not take it back by priority until restored. */
  yielded: boolean;
  /**
   * The role the node last said it had (this node: its role now); null when never heard. A dead
   * node with `lastRole: 'active'` was the active when this node lost it: the page says
   * "was active · dead", not "standby · dead".
   */
  lastRole?: NodeRole | null;
  lockAddress: string;
  sessionAddress: string;
  httpAddress: string;
}

export interface FailoverView {
  at: number;
  from: string | null;
  to: string;
  /** Time with no active node (0 for a split brain: an active was there throughout). */
  gapMs: number;
  cause: FailoverCause;
  /**
   * Resumable session claims (held or queued) the new active kept for their clients, and of
   * those, how many were taken up again and how many expired unclaimed so far (the counts grow
   * on the new active while its lease runs; a standby shows them as of its last snapshot).
   * Absent for a split brain, and on entries recorded before the extension.
   */
  claimsCarried?: number;
  claimsResumed?: number;
  claimsExpired?: number;
  /** Of those, how many an admin ended (force-release, kick) before their client came back. */
  claimsEnded?: number;
  /**
   * The entry's id, unique over the cluster (`<to>/<at>`): the failover messages that update an
   * entry (its figures grow on the new active) replace the entry with the same id on every node.
   * Absent on entries recorded before the extension.
   */
  id?: string;
  /**
   * The transition as the clients saw it (docs/cluster.md#handoff-and-failover-as-the-clients-saw-them).
   * Absent for a split brain and on entries recorded before the extension.
   */
  clients?: TransitionClients;
}

/** What a handoff or failover did to the claims, and the longest stall a client had. */
export interface TransitionClients {
  /**
   * Claims that went on at the new active with their token or queue place: keyed grants kept at
   * the promotion, and resumable session claims (held or queued) whose client sent `RESUME`.
   */
  moved: number;
  /** Resumable session claims whose lease ran out on the new active before their client came back. */
  expired: number;
  /**
   * Session claims the transition ended: those without a claim key (told `REDIRECT` at a handoff,
   * cut at a crash) and resumable ones over the new active's `--max-parked`.
   */
  lost: number;
  /** Resumable session claims an admin ended (force-release, kick) before their client came back. */
  ended: number;
  /** Resumable session claims kept for their clients that are neither resumed nor ended yet. */
  reconnecting: number;
  /** Keyed waiters whose queue place the promotion dropped (their clients re-send the request). */
  requeued: number;
  /** Of those, how many re-sent requests the new active has granted so far (counted per lock). */
  regranted: number;
  /**
   * The longest client stall (ms): from the old active's last grant-capable moment to a claim's
   * `RESUME` or a re-sent keyed request's grant on the new active; null until one is measured.
   */
  longestStallMs: number | null;
  /** How many stalls were measured (resumed session claims plus re-granted keyed requests). */
  stalls: number;
  /**
   * When every claim had its fate (wall-clock ms): no claim reconnecting, every re-sent keyed
   * request granted or its watch over (60 s after the promotion); null while that is not so.
   */
  finishedAt: number | null;
}

export interface ClusterView {
  /** This node's id. */
  self: string;
  instanceId: string;
  /** False for a node started without --config (a cluster of one). */
  clustered: boolean;
  /** This node's phase. */
  phase: NodePhase;
  /** The active node's id as this node knows it; null while none is known. */
  active: string | null;
  /** Restore is possible: some node has yielded. */
  restore: { available: boolean; yielded: string[] };
  /** In priority order. */
  nodes: NodeView[];
  handoff: { available: boolean; reason: string | null; targets: string[] };
  /**
   * Shown by the active node: the higher-priority node it will hand the role back to by priority,
   * in how many ms at the earliest, and why not yet (the hold-down, or its replication lag); null
   * when no such node is waiting, and on a standby. Absent on a single node.
   */
  priorityReturn?: { node: string; inMs: number; reason: string } | null;
  /**
   * Set while this node holds only part of the table of the active it followed (a join cut
   * short), that active is not heard, and so it does not take the active role (docs/cluster.md,
   * "A join cut short"): `from` that active's id, `locks` what this node holds, `reason` in words.
   * Null otherwise; absent on a single node.
   */
  partialTable?: { from: string | null; locks: number; reason: string } | null;
  /**
   * The partition-safe mode (`--coordination etcd`, docs/cluster.md "Two modes"): who holds the
   * active role in etcd, this node's grant permission, the in-sync set and the etcd endpoints'
   * health. Absent in the default mode.
   */
  coordination?: CoordinationView;
  failovers: FailoverView[];
  /**
   * Cluster nodes: the longest event-loop delay this node saw in each of its last 60 seconds
   * (ms, the second under way last), as perf_hooks measures it with a 5 ms timer (a loop that
   * runs freely shows about 5). A streamed snapshot keeps the active's under about 20.
   */
  loopDelayMs?: number[];
  /** The longest garbage-collection pause (ms) in each of the same seconds. */
  gcPauseMs?: number[];
  /**
   * The longest block (ms) in each of the same seconds counting only the CPU time the process
   * spent in it (its work and garbage collection, not the wait for a core on a busy host).
   */
  loopBusyMs?: number[];
  /** The same blocks less the garbage-collection pauses in them: the node's own work in one go (ms). */
  loopWorkMs?: number[];
}

/** The etcd mode's state as one node sees it (ClusterView.coordination). */
export interface CoordinationView {
  mode: 'etcd';
  /** Each configured etcd endpoint, probed on its own: whether it answered its last status request, and its error. */
  endpoints: { endpoint: string; healthy: boolean; lastError: string | null; checkedAgoMs: number | null }[];
  /** Whether this node holds the active role key under its etcd lease. */
  holding: boolean;
  /** Who holds the role key as this node last read it (null: nobody, or not read yet). */
  holder: string | null;
  /** This node's etcd lease: its id, the TTL etcd granted (ms), and how long this node may still grant (ms; null when it does not hold the role). */
  lease: { id: string | null; ttlMs: number; grantRemainingMs: number | null };
  /** The in-sync set etcd stores (the only nodes that may campaign); null when none was ever stored. */
  inSync: string[] | null;
  /** Whether the stored in-sync set lets this node campaign for the role. */
  electable: boolean;
  /**
   * A clean stop's quiet period, as this node last read it: the last active (`by`) stopped with no
   * successor, and no node takes the role for `remainingMs` more (its longest lease still running
   * then; null: the key has no lease, so only deleting it ends the period); null when there is none.
   */
  quiet: { by: string; remainingMs: number | null } | null;
  /** On the active: turns of replies held until every in-sync standby has applied them. */
  repliesWaiting: number;
  /** Why this node cannot grant now (etcd unreachable, quorum lost, lease lapsed), in words; null when it can, or is a standby. */
  blocked: string | null;
  /** The last etcd error this node saw (cleared by the next success). */
  lastError: string | null;
}

export interface LatencySummary {
  count: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/** Every cause with no handover: the shape of `handoverByCause` on a quiet node. */
export function noHandoversByCause(): Record<HandoverCause, LatencySummary> {
  const none = (): LatencySummary => ({ count: 0, p50: null, p95: null, p99: null });
  return { release: none(), disconnect: none(), expiry: none(), 'force-release': none() };
}

export interface StatsView {
  asOf: number;
  state: DaemonState;
  role: NodeRole;
  /** Locks with a holder or waiters. */
  locks: number;
  held: number;
  waiters: number;
  connections: Record<Protocol, number>;
  tokenHighWater: string;
  /** 'ok', or why this node grants nothing that needs a new token (error names of lib/errors.ts). */
  grants: 'ok' | 'tokens-exhausted' | 'storage-unavailable';
  grantsTotal: number;
  /** Handover latency (ms) over the last 60 seconds. */
  handover: LatencySummary;
  /** Handover latency (ms) per cause over the last 15 minutes (the "by cause" chart). */
  handoverByCause: Record<HandoverCause, LatencySummary>;
}

export interface CauseLatency {
  count: number;
  p50: number | null;
  p99: number | null;
}

/** Queue wait (enqueued → granted) of the grants of a bucket or range. */
export interface QueueWaitFigures {
  /** Every grant, an uncontended one (0 ms) included. */
  count: number;
  p50: number | null;
  p99: number | null;
  /** Grants that queued (waited 1 µs or more), and their own percentiles. */
  waited: number;
  waitedP50: number | null;
  waitedP99: number | null;
}

/**
 * One bucket of the charts' history: 10 s (the event stream's last 5 minutes, and the 1 h range)
 * or 5 min (the 24 h range). `p50`, `p99` and `byCause` are the in-daemon handover (the previous
 * holder's end → the next grant); the rest is what waiters lived through.
 */
export interface HistoryBucket {
  /** Epoch ms, a multiple of the bucket's length. */
  start: number;
  grants: number;
  handovers: number;
  p50: number | null;
  p99: number | null;
  byCause: Record<HandoverCause, CauseLatency>;
  /** Queue wait of the grants made in the bucket. */
  queueWait: QueueWaitFigures;
  /** Hold time (granted → released, closed, expired or force-released) of the holders that ended in the bucket. */
  hold: CauseLatency;
  /**
   * Per handover to a waiter, by what ended the previous holder: how long the head of the queue
   * stood behind a lock that was free-but-owed or held by a dead holder. An expiry counts from
   * the silent holder's last sign of life (or the waiter's arrival, when later) to the grant;
   * the other causes are their in-daemon handover.
   */
  blocked: Record<HandoverCause, CauseLatency>;
}

export type HistoryRange = '5m' | '1h' | '24h';
export const HISTORY_RANGES: readonly HistoryRange[] = ['5m', '1h', '24h'];

/** `GET /api/v1/stats/history?range=`: the buckets of one range, and the range's merged figures. */
export interface StatsHistory {
  range: HistoryRange;
  asOf: number;
  /** 10,000 for 5m and 1h, 300,000 for 24h. */
  bucketMs: number;
  /** Oldest first, every bucket of the range (empty ones included). */
  buckets: HistoryBucket[];
  /** The histograms of the whole range merged: percentiles of all its samples, not of bucket figures. */
  summary: {
    grants: number;
    queueWait: QueueWaitFigures;
    hold: CauseLatency;
    blocked: Record<HandoverCause, CauseLatency>;
    handover: Record<HandoverCause, CauseLatency>;
  };
}

/** How a grant (or, for `kick`, a wait) ended. `close`: the holder's connection closed; `failover`: this node stopped serving it (its state was replaced). */
export type GrantEnd = 'release' | 'close' | 'expiry' | 'force-release' | 'kick' | 'failover';

/** One ended grant of a lock's history (or a waiter an admin kicked: no token, never held). */
export interface GrantRecord {
  claimId: string;
  protocol: Protocol;
  client: string;
  /** The name the client gave itself; null when it sent none. */
  clientName: string | null;
  /** Null for a kicked waiter. */
  token: string | null;
  /** Null for a kicked waiter. */
  grantedAt: number | null;
  /** Queue wait before the grant (for a kicked waiter: until the kick). */
  queueWaitMs: number;
  /** Null for a kicked waiter. */
  heldMs: number | null;
  endedAt: number;
  end: GrantEnd;
}

/** `GET /api/v1/locks/{name}/history`: the lock's last ended grants, newest first. */
export interface LockHistory {
  name: string;
  asOf: number;
  grants: GrantRecord[];
  /** Exact percentiles over the listed grants (kicked waiters left out); null when there are none. */
  queueWait: { p50: number | null; p99: number | null };
  hold: { p50: number | null; p99: number | null };
}

export type FeedKind = 'grant' | 'release' | 'expire' | 'force-release' | 'enqueue' | 'leave-queue' | 'kick' | 'detach' | 'resume' | 'admin';

export interface FeedItem {
  /** Increases by one per item; the dashboard keeps the last 200. */
  seq: number;
  at: number;
  kind: FeedKind;
  lock: string | null;
  /** One line for people: "granted to worker-7@host-3 pid 4121 (127.0.0.1:5312, keyed) token 42", or "granted to 127.0.0.1:5312 (keyed) token 42" for a client that gave no identity. */
  text: string;
}

/** Every admin action the audit records (one list for the API's type, the log reader and the peer message). */
export const AUDIT_ACTIONS = ['force-release', 'kick', 'handoff', 'restore', 'sign-in', 'sign-out', 'release-client'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  at: number;
  /** "bearer:admin" or "session:<public id>". */
  who: string;
  /** `release-client`: one bulk release by client (POST /api/v1/clients/force-release); each lock it freed has its own `force-release` entry. */
  action: AuditAction;
  target: string;
  /** "ok" or the error code it failed with. */
  result: string;
  detail: string | null;
  /**
   * The node that recorded it: every node keeps the whole cluster's audit (entries are
   * replicated over the peer links), so a page on any node shows every admin action. Absent on
   * entries written before the field (read back from an older audit.log).
   */
  node?: string;
  /** Unique over the cluster ("<node>/<instance>/<n>"): a replicated entry is kept once. */
  id?: string;
}

export interface AuthView {
  /** What the caller may do: null when not signed in. */
  role: 'admin' | 'read' | null;
  /** Whether reads need no credentials on this node. */
  readsOpen: boolean;
}

/**
 * `event: snapshot`: the whole picture, sent first on every (re)connect. A large table comes in
 * pages: `locks` holds the first one, and with `pending` the rest follow as `event: locks`
 * messages (deltas may come in between), the last one with `last: true`.
 */
export interface SnapshotMessage {
  instanceId: string;
  asOf: number;
  stats: StatsView;
  cluster: ClusterView;
  locks: LockSummary[];
  /** More of the table follows in `event: locks` messages. */
  pending: boolean;
  /** Locks in the table when the snapshot began (for a progress figure while it pages). */
  total: number;
  /**
   * `locks` are the table's first locks in name (code-unit) order, and the pages that follow
   * leave them out: while `pending`, every lock named up to the last of them is among them, so
   * a table sorted by name shows its first rows right before the rest arrives. Absent (an older
   * daemon): `locks` are the first page of the table in no particular order.
   */
  firstByName?: boolean;
  history: HistoryBucket[];
  feed: FeedItem[];
  /** The node's newest audit position (GET /api/v1/audit `latest`) when the snapshot was taken. */
  audit?: number;
}

/**
 * `event: locks`: the next page of the snapshot's table, as the locks were when it was built.
 * A lock that a delta since the snapshot named is newer in that delta: the reader keeps the delta's.
 */
export interface LocksChunkMessage {
  locks: LockSummary[];
  /** The table is complete with this page. */
  last: boolean;
}

/** `event: delta`: what changed since the previous message (at most 10 a second). */
export interface DeltaMessage {
  asOf: number;
  stats: StatsView;
  /** Locks whose holder or queue changed, as they are now. */
  upserts: LockSummary[];
  /** Locks nobody holds or waits for any more. */
  removed: string[];
  /** Buckets that changed (the current one, and one just closed). */
  history: HistoryBucket[];
  feed: FeedItem[];
  /** Present when the cluster view changed. */
  cluster: ClusterView | null;
  /** Present when the node kept a new audit entry: its newest audit position (GET /api/v1/audit `latest`); the page reads its audit again. */
  audit?: number;
}

export interface ApiError {
  error: { code: string; message: string };
}
