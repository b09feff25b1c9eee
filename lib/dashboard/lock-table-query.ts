// The lock table's search, filters and sort: pure functions over the rows the stream built, with
// the local clock passed in (the time filters depend on it; the sorts do not).
import type { Protocol } from '../ops-api/api-types.ts';
import { heldForAt, type LockRow } from './dashboard-state.ts';
import { leaseAtRisk } from './lease-risk.ts';

/** What narrows the table; every field off is "every lock". */
export interface LockFilters {
  /**
   * Text a lock's name, holder address or holder identity contains (case-insensitive); a
   * waiter's address or identity too, through the names the server found (`WaiterHits`).
   */
  q: string;
  /** Held over this protocol. */
  proto: Protocol | null;
  /** Has at least one waiter. */
  waiters: boolean;
  /** Held, and the holder may lose it within this many seconds (lease-risk.ts: not a heartbeating session). */
  expiringWithinS: number | null;
  /** Held for longer than this many seconds. */
  heldLongerThanS: number | null;
}

export const NO_FILTERS: LockFilters = { q: '', proto: null, waiters: false, expiringWithinS: null, heldLongerThanS: null };

/** Whether a filter reads the clock (the table then refreshes its selection as time passes). */
export function filtersUseClock(f: LockFilters): boolean {
  return f.expiringWithinS !== null || f.heldLongerThanS !== null;
}

/** Whether anything but the empty search is on. */
export function filtersActive(f: LockFilters): boolean {
  return f.q.trim() !== '' || f.proto !== null || f.waiters || filtersUseClock(f);
}

function contains(text: string | null | undefined, needle: string): boolean {
  return text?.toLowerCase().includes(needle) === true;
}

/**
 * The locks one of whose waiters' address or identity contains the search text, as the server
 * found them (GET /api/v1/locks/waiter-search): the table knows only each lock's queue length.
 * `q` is the search text they were found for; they count only while the search is still that.
 */
export interface WaiterHits {
  q: string;
  names: ReadonlySet<string>;
}

/** One row against the filters at local time `now`. `needle` is the search text, trimmed and lower-cased once. */
function matches(row: LockRow, f: LockFilters, needle: string, now: number, waiterNames: ReadonlySet<string> | null): boolean {
  const { name, holder, queueLength } = row.summary;
  if (needle !== '' && !contains(name, needle) && !contains(holder?.client, needle) && !contains(holder?.clientName, needle) && waiterNames?.has(name) !== true)
    return false;
  if (f.proto !== null && holder?.protocol !== f.proto) return false;
  if (f.waiters && queueLength === 0) return false;
  if (f.expiringWithinS !== null && !leaseAtRisk(row, now, f.expiringWithinS * 1_000)) return false;
  if (f.heldLongerThanS !== null) {
    const held = heldForAt(row, now);
    if (held === null || held <= f.heldLongerThanS * 1_000) return false;
  }
  return true;
}

export type LockSortKey = 'name' | 'heldFor' | 'token' | 'leaseLeft' | 'queue';
export type SortDirection = 'asc' | 'desc';
export interface LockSort {
  key: LockSortKey;
  direction: SortDirection;
}

/** The table's order when the URL names none: by name, A→Z (the order the snapshot's first page comes in). */
export const DEFAULT_SORT: LockSort = { key: 'name', direction: 'asc' };

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

/** Lease-left order without a clock: the local time the lease ends (leaseRemainingMs + receivedAt). */
function leaseEndKey(row: LockRow): number | null {
  const holder = row.summary.holder;
  return holder === null ? null : holder.leaseRemainingMs + row.receivedAt;
}

function compareMaybe<T>(a: T | null, b: T | null, sign: number, compare: (x: T, y: T) => number): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return sign * compare(a, b);
}

const byNumber = (x: number, y: number) => x - y;

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
      return compareMaybe(heldForKey(a), heldForKey(b), sign, byNumber) || compareNames(an, bn);
    case 'leaseLeft':
      return compareMaybe(leaseEndKey(a), leaseEndKey(b), sign, byNumber) || compareNames(an, bn);
    case 'token':
      return compareMaybe(a.summary.holder?.token ?? null, b.summary.holder?.token ?? null, sign, compareDecimal) || compareNames(an, bn);
  }
}

/**
 * The rows the table shows at local time `now`: those the filters keep, sorted. With `through`,
 * only the locks named up to it (code-unit order).
 */
export function selectLockRows(
  locks: ReadonlyMap<string, LockRow>,
  filters: LockFilters,
  sort: LockSort,
  now: number,
  through?: string,
  waiters: WaiterHits | null = null,
): LockRow[] {
  const needle = filters.q.trim().toLowerCase();
  const everything = !filtersActive(filters);
  const waiterNames = waiters !== null && waiters.q.trim().toLowerCase() === needle ? waiters.names : null;
  const rows: LockRow[] = [];
  for (const row of locks.values()) {
    if (through !== undefined && row.summary.name > through) continue;
    if (everything || matches(row, filters, needle, now, waiterNames)) rows.push(row);
  }
  return rows.sort((a, b) => compareRows(a, b, sort));
}

/** Where the snapshot's table stands while its pages still come (DashboardState's paging fields). */
export interface TablePaging {
  /** Locks received so far. */
  loaded: number;
  /** Locks in the table when the snapshot began. */
  total: number;
  /** Every lock named up to this is known (DashboardState.pagingThrough); null: none is known to be complete. */
  through: string | null;
}

/**
 * What the table can show before the snapshot's last page came:
 * - `first-by-name`: sorted by name A→Z, the rows up to `through` are the table's first rows
 *   for any filter (every lock named up to there is known), and only those are shown;
 * - `partial`: any other order, or no complete prefix: the rows so far, in the table's order,
 *   not yet all of them (the page says so).
 */
export type TableLoading = { kind: 'first-by-name' | 'partial'; loaded: number; total: number } | null;

export interface TableView {
  rows: LockRow[];
  loading: TableLoading;
}

/** The table's rows and whether they are all of them yet; `paging` null once the table is complete. */
export function selectTableView(
  locks: ReadonlyMap<string, LockRow>,
  filters: LockFilters,
  sort: LockSort,
  now: number,
  paging: TablePaging | null,
  waiters: WaiterHits | null = null,
): TableView {
  if (paging === null) return { rows: selectLockRows(locks, filters, sort, now, undefined, waiters), loading: null };
  const progress = { loaded: paging.loaded, total: Math.max(paging.total, paging.loaded) };
  if (paging.through !== null && sort.key === 'name' && sort.direction === 'asc') {
    return { rows: selectLockRows(locks, filters, sort, now, paging.through, waiters), loading: { kind: 'first-by-name', ...progress } };
  }
  return { rows: selectLockRows(locks, filters, sort, now, undefined, waiters), loading: { kind: 'partial', ...progress } };
}

/** The next sort after a click on a column header: same column flips, a new one starts sensibly. */
export function nextSort(current: LockSort, key: LockSortKey): LockSort {
  if (current.key === key) return { key, direction: current.direction === 'asc' ? 'desc' : 'asc' };
  // Names read A→Z and lease left soonest first (what is about to expire); held for, token and
  // queue are most useful largest first.
  return { key, direction: key === 'name' || key === 'leaseLeft' ? 'asc' : 'desc' };
}
