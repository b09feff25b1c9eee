// The dashboard's picture of one node, built from the ops API's server-sent events: a snapshot
// replaces everything, a delta patches it. Pure functions with the local clock passed in, so
// the stream hook, the table and the tests all agree on the same arithmetic.
//
// Local times (`receivedAt`, `now`) come from the browser's monotonic clock (performance.now()).
// A lease counts down from the moment its message arrived, not from the server's wall clock,
// so a skewed clock between browser and daemon does not bend the countdown.
import type { ClusterView, DeltaMessage, FeedItem, HistoryBucket, LocksChunkMessage, LockSummary, SnapshotMessage, StatsView } from '../ops-api/api-types.ts';

/** How many feed items the dashboard keeps (the newest by seq)... */
export const FEED_LIMIT = 200;
/**
 * ...plus up to this many older admin items: at 4 handovers a second the last 200 items span 16
 * seconds, and an admin action must not scroll out of the feed before anyone has read it.
 */
export const FEED_ADMIN_LIMIT = 100;
/** How much history the event stream keeps (the charts' 5-minute range; longer ones are fetched). */
export const HISTORY_WINDOW_MS = 5 * 60_000;
export const BUCKET_MS = 10_000;

/** A lock as the table shows it: its summary and the local time that summary was true. */
export interface LockRow {
  readonly summary: LockSummary;
  readonly receivedAt: number;
}

export interface DashboardState {
  readonly instanceId: string;
  /** Server time (epoch ms) of the newest message. */
  readonly asOf: number;
  /** Local monotonic time the newest message arrived. */
  readonly receivedAt: number;
  readonly stats: StatsView;
  readonly cluster: ClusterView;
  /**
   * Local monotonic time the message that carried `cluster` arrived. The stream re-sends the view
   * only when it changes (the etcd mode's grant time left and check ages count as changed only when
   * a keep-alive or a probe moves them), so its running figures count on from here, not from the
   * newest message.
   */
  readonly clusterReceivedAt: number;
  /** By name. A new Map only when some lock changed, so readers can compare identities. */
  readonly locks: ReadonlyMap<string, LockRow>;
  /** Ascending by start, at most the last 5 minutes. */
  readonly history: readonly HistoryBucket[];
  /** Ascending by seq, at most FEED_LIMIT. */
  readonly feed: readonly FeedItem[];
  /**
   * While the snapshot's table is still coming in pages: the names deltas have named since the
   * snapshot. A page shows a lock as it was when the page was built, so for these names the
   * delta is newer and the page's row is skipped. Null once the table is complete.
   */
  readonly paging: ReadonlySet<string> | null;
  /**
   * While paging a snapshot whose header carried the table's first locks by name
   * (`firstByName`): the last of those names. Every lock named up to it is in `locks` (the
   * header had them all, and deltas since add and remove the others), so the table sorted by
   * name is right up to there before the rest arrives. Null when the table is complete, or when
   * the header's locks were in no particular order.
   */
  readonly pagingThrough: string | null;
  /** Locks in the table when the snapshot began (the progress figure while paging). */
  readonly snapshotTotal: number;
}

/** The last name of `locks` in code-unit order (the order of `<`). */
function lastName(locks: readonly LockSummary[]): string | null {
  let last: string | null = null;
  for (const { name } of locks) if (last === null || name > last) last = name;
  return last;
}

export function applySnapshot(msg: SnapshotMessage, receivedAt: number): DashboardState {
  const locks = new Map<string, LockRow>();
  for (const summary of msg.locks) locks.set(summary.name, { summary, receivedAt });
  return {
    instanceId: msg.instanceId,
    asOf: msg.asOf,
    receivedAt,
    stats: msg.stats,
    cluster: msg.cluster,
    clusterReceivedAt: receivedAt,
    locks,
    history: mergeHistory([], msg.history, msg.asOf),
    feed: mergeFeed([], msg.feed),
    paging: msg.pending ? new Set() : null,
    pagingThrough: msg.pending && msg.firstByName === true ? lastName(msg.locks) : null,
    snapshotTotal: msg.total,
  };
}

/** A delta and the local time it arrived (its leases count down from then, however late it is applied). */
export interface ReceivedDelta {
  readonly msg: DeltaMessage;
  readonly receivedAt: number;
}

/** A message after the snapshot, as it arrived: a delta, or a page of the snapshot's table. */
export type Received = ({ readonly kind: 'delta' } & ReceivedDelta) | { readonly kind: 'locks'; readonly msg: LocksChunkMessage; readonly receivedAt: number };

/**
 * Deltas and pages of the snapshot's table in their order of arrival, as one state change: the
 * page applies what came within one beat together, so the lock Map is copied once for the whole
 * batch (a page applied on its own copied all 10,000 locks and re-sorted the table, fifty times
 * for one snapshot). The same result as applying them one by one: a page skips the locks a
 * delta before it named (paging), and a delta after a page replaces what the page showed.
 * Before any snapshot there is nothing to patch (`undefined` stays so), and a page with no
 * snapshot paging (after the last one) has nothing to fill.
 */
export function applyReceived(state: DashboardState | undefined, batch: readonly Received[]): DashboardState | undefined {
  if (state === undefined || batch.length === 0) return state;
  let next: Map<string, LockRow> | null = null;
  // Copied before the first change, then changed in place.
  let paging = state.paging;
  let pagingCopied = false;
  let pagingThrough = state.pagingThrough;
  let lastDelta: ReceivedDelta | null = null;
  let cluster = state.cluster;
  let clusterReceivedAt = state.clusterReceivedAt;
  let history = state.history;
  const feed: FeedItem[] = [];
  let changed = false;
  for (const item of batch) {
    if (item.kind === 'locks') {
      // A page with no snapshot paging (after the last one) has nothing to fill.
      if (paging === null) continue;
      changed = true;
      const { msg, receivedAt } = item;
      if (msg.locks.length > 0) {
        next ??= new Map(state.locks);
        for (const summary of msg.locks) if (!paging.has(summary.name)) next.set(summary.name, { summary, receivedAt });
      }
      if (msg.last) {
        paging = null;
        pagingThrough = null;
      }
      continue;
    }
    const { msg, receivedAt } = item;
    lastDelta = item;
    changed = true;
    if (msg.upserts.length > 0 || msg.removed.length > 0) {
      next ??= new Map(state.locks);
      for (const summary of msg.upserts) next.set(summary.name, { summary, receivedAt });
      for (const name of msg.removed) next.delete(name);
      if (paging !== null) {
        if (!pagingCopied) {
          paging = new Set(paging);
          pagingCopied = true;
        }
        const named = paging as Set<string>;
        for (const name of touchedLocks(msg)) named.add(name);
      }
    }
    if (msg.cluster !== null && msg.cluster !== undefined) {
      cluster = msg.cluster;
      clusterReceivedAt = receivedAt;
    }
    if (msg.history.length > 0) history = mergeHistory(history, msg.history, msg.asOf);
    for (const f of msg.feed) feed.push(f);
  }
  if (!changed) return state;
  return {
    instanceId: state.instanceId,
    asOf: lastDelta === null ? state.asOf : lastDelta.msg.asOf,
    receivedAt: lastDelta === null ? state.receivedAt : lastDelta.receivedAt,
    stats: lastDelta === null ? state.stats : lastDelta.msg.stats,
    cluster,
    clusterReceivedAt,
    locks: next ?? state.locks,
    history,
    feed: feed.length > 0 ? mergeFeed(state.feed, feed) : state.feed,
    paging,
    pagingThrough,
    snapshotTotal: state.snapshotTotal,
  };
}

/** The lock names a delta touched: their detail queries are stale. */
export function touchedLocks(msg: DeltaMessage): Set<string> {
  const names = new Set<string>(msg.removed);
  for (const summary of msg.upserts) names.add(summary.name);
  return names;
}

/** Buckets replace by start; the result is sorted and holds only the last 5 minutes. */
export function mergeHistory(current: readonly HistoryBucket[], incoming: readonly HistoryBucket[], asOf: number): HistoryBucket[] {
  const byStart = new Map<number, HistoryBucket>();
  for (const bucket of current) byStart.set(bucket.start, bucket);
  for (const bucket of incoming) byStart.set(bucket.start, bucket);
  const oldest = asOf - HISTORY_WINDOW_MS;
  return [...byStart.values()].filter((b) => b.start + BUCKET_MS > oldest).sort((a, b) => a.start - b.start);
}

/**
 * Items append once each (by seq), ascending: the newest FEED_LIMIT of every kind, and the
 * newest FEED_ADMIN_LIMIT admin items however old (so at most 300 in all).
 */
export function mergeFeed(current: readonly FeedItem[], incoming: readonly FeedItem[]): FeedItem[] {
  const bySeq = new Map<number, FeedItem>();
  for (const item of current) bySeq.set(item.seq, item);
  for (const item of incoming) bySeq.set(item.seq, item);
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  if (all.length <= FEED_LIMIT) return all;
  const recentFrom = all.length - FEED_LIMIT;
  const olderAdmins = all.slice(0, recentFrom).filter((item) => item.kind === 'admin');
  return [...olderAdmins.slice(Math.max(0, olderAdmins.length - FEED_ADMIN_LIMIT)), ...all.slice(recentFrom)];
}

// ---- lease and hold times, counted locally ----

/** Lease left at local time `now`; null for a lock nobody holds. Never below zero. */
export function leaseRemainingAt(row: LockRow, now: number): number | null {
  const holder = row.summary.holder;
  if (holder === null) return null;
  return Math.max(0, holder.leaseRemainingMs - Math.max(0, now - row.receivedAt));
}

/** How long the holder has held the lock at local time `now`; null for no holder. */
export function heldForAt(row: LockRow, now: number): number | null {
  const holder = row.summary.holder;
  if (holder === null) return null;
  return holder.heldForMs + Math.max(0, now - row.receivedAt);
}

/** `ms` measured at local time `since`, grown by the time passed until `now`. */
export function elapsedSince(ms: number, since: number, now: number): number {
  return ms + Math.max(0, now - since);
}

/** A server-time deadline seen at server time `asOf` (local time `since`): time left at `now`. */
export function remainingUntil(deadline: number, asOf: number, since: number, now: number): number {
  return Math.max(0, deadline - asOf - Math.max(0, now - since));
}

// The table's search, filters and sort are in lock-table-query.ts.
