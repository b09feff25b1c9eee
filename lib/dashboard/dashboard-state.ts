// The dashboard's picture of one node, built from the ops API's server-sent events: a snapshot
// replaces everything, a delta patches it. Pure functions with the local clock passed in, so
// the stream hook, the table and the tests all agree on the same arithmetic.
//
// Local times (`receivedAt`, `now`) come from the browser's monotonic clock (performance.now()).
// A lease counts down from the moment its message arrived, not from the server's wall clock,
// so a skewed clock between browser and daemon does not bend the countdown.
import type { ClusterView, DeltaMessage, FeedItem, HistoryBucket, LocksChunkMessage, LockSummary, SnapshotMessage, StatsView } from '../ops-api/api-types.ts';

/** How many feed items the dashboard keeps (the newest by seq). */
export const FEED_LIMIT = 200;
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
  /** Locks in the table when the snapshot began (the progress figure while paging). */
  readonly snapshotTotal: number;
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
    locks,
    history: mergeHistory([], msg.history, msg.asOf),
    feed: mergeFeed([], msg.feed),
    paging: msg.pending ? new Set() : null,
    snapshotTotal: msg.total,
  };
}

/** One more page of the snapshot's table; a page with no snapshot paging has nothing to fill. */
export function applyLocksChunk(state: DashboardState | undefined, msg: LocksChunkMessage, receivedAt: number): DashboardState | undefined {
  if (state === undefined || state.paging === null) return state;
  const paging = state.paging;
  let locks = state.locks;
  if (msg.locks.length > 0) {
    const next = new Map(state.locks);
    for (const summary of msg.locks) if (!paging.has(summary.name)) next.set(summary.name, { summary, receivedAt });
    locks = next;
  }
  return { ...state, locks, paging: msg.last ? null : paging };
}

/** A delta before any snapshot has nothing to patch; the caller keeps `undefined`. */
export function applyDelta(state: DashboardState | undefined, msg: DeltaMessage, receivedAt: number): DashboardState | undefined {
  if (state === undefined) return undefined;
  let locks = state.locks;
  let paging = state.paging;
  if (msg.upserts.length > 0 || msg.removed.length > 0) {
    const next = new Map(state.locks);
    for (const summary of msg.upserts) next.set(summary.name, { summary, receivedAt });
    for (const name of msg.removed) next.delete(name);
    locks = next;
    if (paging !== null) paging = new Set([...paging, ...touchedLocks(msg)]);
  }
  return {
    instanceId: state.instanceId,
    asOf: msg.asOf,
    receivedAt,
    stats: msg.stats,
    cluster: msg.cluster ?? state.cluster,
    locks,
    history: msg.history.length > 0 ? mergeHistory(state.history, msg.history, msg.asOf) : state.history,
    feed: msg.feed.length > 0 ? mergeFeed(state.feed, msg.feed) : state.feed,
    paging,
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

/** Items append once each (by seq); the newest FEED_LIMIT are kept, ascending. */
export function mergeFeed(current: readonly FeedItem[], incoming: readonly FeedItem[]): FeedItem[] {
  const bySeq = new Map<number, FeedItem>();
  for (const item of current) bySeq.set(item.seq, item);
  for (const item of incoming) bySeq.set(item.seq, item);
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  return all.length > FEED_LIMIT ? all.slice(all.length - FEED_LIMIT) : all;
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

// ---- the table: filter and sort ----

export type LockSortKey = 'name' | 'heldFor' | 'token' | 'queue';
export type SortDirection = 'asc' | 'desc';
export interface LockSort {
  key: LockSortKey;
  direction: SortDirection;
}

/** Compares two decimal u64 strings numerically (no leading zeros, as the API sends them). */
export function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Held-for order without a clock: heldFor(now) = heldForMs + now - receivedAt, and `now` is
 * the same for every row, so heldForMs - receivedAt orders the rows for any `now`.
 */
function heldForKey(row: LockRow): number | null {
  const holder = row.summary.holder;
  return holder === null ? null : holder.heldForMs - row.receivedAt;
}

/** Rows without a value (no holder) sort last in either direction; ties go by name. */
function compareRows(a: LockRow, b: LockRow, sort: LockSort): number {
  const sign = sort.direction === 'asc' ? 1 : -1;
  const an = a.summary.name;
  const bn = b.summary.name;
  switch (sort.key) {
    case 'name':
      return sign * compareNames(an, bn);
    case 'queue':
      return sign * (a.summary.queueLength - b.summary.queueLength) || compareNames(an, bn);
    case 'heldFor':
      return compareMaybe(heldForKey(a), heldForKey(b), sign, (x, y) => x - y) || compareNames(an, bn);
    case 'token':
      return compareMaybe(a.summary.holder?.token ?? null, b.summary.holder?.token ?? null, sign, compareDecimal) || compareNames(an, bn);
  }
}

function compareMaybe<T>(a: T | null, b: T | null, sign: number, compare: (x: T, y: T) => number): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return sign * compare(a, b);
}

/** The rows the table shows: names containing `query` (case-insensitive), sorted. */
export function selectLockRows(locks: ReadonlyMap<string, LockRow>, query: string, sort: LockSort): LockRow[] {
  const needle = query.trim().toLowerCase();
  const rows: LockRow[] = [];
  for (const row of locks.values()) {
    if (needle === '' || row.summary.name.toLowerCase().includes(needle)) rows.push(row);
  }
  return rows.sort((a, b) => compareRows(a, b, sort));
}

/** The next sort after a click on a column header: same column flips, a new one starts sensibly. */
export function nextSort(current: LockSort, key: LockSortKey): LockSort {
  if (current.key === key) return { key, direction: current.direction === 'asc' ? 'desc' : 'asc' };
  // Names read A→Z; held for, token and queue are most useful largest first.
  return { key, direction: key === 'name' ? 'asc' : 'desc' };
}
