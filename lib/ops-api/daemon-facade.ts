// The narrow face of the running daemon that in-process code (the ops API's route handlers,
// bundled by Next with their own module copies) reaches through globalThis. The server
// registers it at start; nothing creates a daemon by importing this file. Route code must use
// only what is here: plain data and methods, never `instanceof` on daemon classes (a bundled
// copy of a class is a different class).
import type { ClientWaitingView, ContentionRange, ContentionView, WaiterSearchView } from './lock-views-types.ts';
import type { AuditEntry, ClusterView, DaemonState, HistoryRange, LockDetail, LockHistory, LocksPage, NodeRole, StatsHistory, StatsView } from './api-types.ts';
import type { ClientHeldView } from './client-release-types.ts';
import type { AdminOp, ClientMatch, LockName } from './admin-request.ts';
import type { AdminAudit, AdminResult } from './admin-result.ts';
import type { AuditCursor, AuditFilter, AuditRow } from './audit-filter.ts';
import type { HeldPage, LocksQuery, QueuePage } from './page-queries.ts';

/** What a request is allowed to do, as decided by the security policy. */
export type Principal =
  | { kind: 'anonymous' }
  /** `name`: "admin" or "read" for bearer tokens; the public session id for cookies. */
  | { kind: 'bearer' | 'session'; role: 'admin' | 'read'; name: string };

/** The cookie a signed-in console session is carried in: set by the sign-in route, read by Security. */
export const SESSION_COOKIE = 'baton_session';

export interface SecurityFacade {
  /** Who is asking, from the Authorization header or the session cookie. */
  identify(authorization: string | null, cookie: string | null): Principal;
  /** Reads need no credentials (bound to loopback and no --read-token). */
  readonly readsOpen: boolean;
  /**
   * Counts a sign-in attempt from `client` (its address); null when it may go on, else the
   * seconds until that address may try again (sign-in-limits.ts).
   */
  admitSignIn(client: string): number | null;
  /** Whether a successful sign-in with this role is audited: always for admin, at most 10 a minute for read. */
  auditSignIn(role: 'admin' | 'read'): boolean;
  /** Trades a token for a new session; null when the token is wrong. */
  signIn(token: string): { cookieValue: string; role: 'admin' | 'read'; publicId: string; maxAgeSeconds: number } | null;
  signOut(cookie: string | null): void;
  /**
   * Counts a failed sign-in; true when it should be audited. Failures past 10 a minute are
   * still refused but not written, so nobody can fill the disk by guessing tokens.
   */
  noteFailedSignIn(): boolean;
}

/** Whether the audit file gets what is recorded (audit-log.ts). */
export interface AuditHealth {
  /** `unwritable`: the last write failed; entries wait in memory and are retried every second. */
  file: 'ok' | 'unwritable';
  /** Entries recorded and not in the file yet. */
  pending: number;
  /** Entries dropped since start because too many waited for the file (over 4 MiB). */
  dropped: number;
  /** Why the last write failed; null when it did not. */
  error: string | null;
}

export interface AuditFacade {
  record(entry: Omit<AuditEntry, 'at'>): void;
  health(): AuditHealth;
  /** Newest last. */
  recent(limit: number): AuditEntry[];
  /** One page of GET /api/v1/audit: the newest `limit` matching entries before `cursor`, newest last. */
  page(filter: AuditFilter, cursor: AuditCursor | null, limit: number): { entries: AuditRow[]; older: string | null };
  /** The matching entries that arrived after position `after` (GET /api/v1/audit?after=). */
  since(filter: AuditFilter, after: number, limit: number): { entries: AuditRow[]; latest: number; more: boolean };
  /** The newest arrival position: it changes whenever an entry is kept (the live feed tells pages so). */
  readonly latest: number;
  /** Called for each entry as it is recorded (the SSE feed shows admin actions). */
  subscribe(listener: (entry: AuditEntry) => void): () => void;
}

/** One subscriber of the SSE hub: it receives whole, already encoded SSE frames. */
export interface FeedSubscriber {
  /** Return false when the subscriber can take no more (a slow reader): the hub drops it. */
  send(frame: Uint8Array): boolean;
  /** Bytes queued for the reader and not taken yet. */
  queuedBytes(): number;
  /** Bytes the reader has taken since the stream began (only grows). */
  takenBytes(): number;
  /** The hub ended the subscription (dropped as slow, or shutting down). */
  close(): void;
}

export type FeedJoin =
  /** `pull`: the reader took what was queued, send it more of its snapshot. */
  { ok: true; leave(): void; pull(): void } | { ok: false; error: 'too-many-streams'; detail: string };

export interface FeedFacade {
  /**
   * Opens a stream for a reader at `client` (its address): a snapshot within JOIN_WINDOW_MS
   * (shared with the streams that came meanwhile; paged, as the reader takes it), then coalesced
   * deltas and heartbeats. Refused past the caps of streams per client address and in all.
   */
  subscribe(subscriber: FeedSubscriber, client: string): FeedJoin;
  readonly subscriberCount: number;
}

/** The mutations of the ops API, checked where they entered the process (admin-request.ts), and their outcome (admin-result.ts). */
export type { AdminAudit, AdminOp, AdminResult, ClientMatch, LockName };

export interface AdminFacade {
  /**
   * Runs `op` where it belongs: on this node when it is the active one (or for restore, on the
   * node it names), else forwarded to the active node. `who` names the caller for the audit
   * entry the active node writes about a forwarded operation.
   */
  run(op: AdminOp, who: string): Promise<AdminResult>;
}

/** Whether this node can grant, for the probes: two figures, no walk of the locks. */
export interface GrantsView {
  /** Null when it can; else why not (lib/errors.ts names): no token left, or the ceiling cannot be stored. */
  refusal: Exclude<StatsView['grants'], 'ok'> | null;
  /** The highest fencing token issued so far. */
  tokenHighWater: bigint;
}

/**
 * What route code may ask of the daemon: views as the ops API's JSON shapes, the admin ops,
 * and the services a request needs (who is asking, the audit log, the event feed). Not the
 * engine nor its clock: what reads them is behind these methods (server/ops-facade
 * builds them, ops-facade.ts), so a route cannot change the engine except by an admin op.
 */
export interface DaemonFacade {
  readonly instanceId: string;
  state(): DaemonState;
  role(): NodeRole;
  grants(): GrantsView;
  stats(): StatsView;
  cluster(): ClusterView;
  /** One page of lock summaries in name order (see lock-views.ts locksPage); the first page waits for the name index's build. */
  locksPage(query: LocksQuery): Promise<LocksPage>;
  /**
   * One lock with one page of its queue; undefined when nobody holds or waits for it (the engine
   * has forgotten it), 'no-such-waiter' when the page's `after` is no longer in the queue.
   */
  lockDetail(name: LockName, page: QueuePage): LockDetail | 'no-such-waiter' | undefined;
  /** One range of the charts' history: 5m and 1h in 10 s buckets, 24h in 5 min buckets. */
  statsHistory(range: HistoryRange): StatsHistory;
  /** The lock's last ended grants, newest first; empty when this node has none for it (never seen, or pushed out). */
  lockHistory(name: LockName): LockHistory;
  /** One page of the locks held by one client, by the identity it gave or its address (client-held-page.ts). */
  clientHeld(client: ClientMatch, page: HeldPage): Promise<ClientHeldView>;
  /** One page of the waiters of one client across locks (server/lock-views/client-waiting-page.ts). */
  clientWaiting(client: ClientMatch, page: HeldPage): Promise<ClientWaitingView>;
  /** The most contended locks now and over the range (server/lock-views/contention-tracker.ts). */
  contention(range: ContentionRange, limit: number): ContentionView;
  /** The locks one of whose waiters' address or identity contains `q` (server/lock-views/waiter-search.ts). */
  searchWaiters(q: string, limit: number): WaiterSearchView;
  /** Mutations (force-release, kick, handoff, restore), forwarded to the active node by a standby. */
  readonly admin: AdminFacade;
  metrics(): Promise<{ contentType: string; body: string }>;
  readonly security: SecurityFacade;
  readonly audit: AuditFacade;
  readonly feed: FeedFacade;
}

const KEY = Symbol.for('baton.daemon');
type Holder = { [KEY]?: DaemonFacade };

/**
 * Registers the daemon for route code. One per process: a second daemon (tests start several)
 * does not take the place of the first one; false tells it so.
 */
export function registerDaemonFacade(facade: DaemonFacade): boolean {
  const holder = globalThis as Holder;
  const current = holder[KEY];
  if (current !== undefined && current.instanceId !== facade.instanceId) return false;
  holder[KEY] = facade;
  return true;
}

export function unregisterDaemonFacade(instanceId: string): void {
  const holder = globalThis as Holder;
  if (holder[KEY]?.instanceId === instanceId) delete holder[KEY];
}

/** The running daemon, or undefined when none is running in this process. */
export function getDaemonFacade(): DaemonFacade | undefined {
  return (globalThis as Holder)[KEY];
}
