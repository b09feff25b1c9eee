import { useDeferredValue, useMemo } from 'react';
import type { LockRow } from '@/lib/dashboard/dashboard-state.ts';
import { filtersUseClock, type LockFilters, type LockSort, selectTableView, type TableLoading } from '@/lib/dashboard/lock-table-query.ts';
import { useLocks, useTablePaging } from '../data/queries.ts';
import { useNow } from '../data/use-now.ts';
import { useWaiterSearch } from './use-waiter-search.ts';

// The time filters ("lease ends within", "held longer than") move rows in and out as time passes:
// with one on, the selection is redone each second; with none, the clock is not read at all
// (an hourly ticker is the cheapest stand-in a hook can call unconditionally).
const CLOCK_TICK_MS = 1_000;
const IDLE_TICK_MS = 3_600_000;

export interface LockRowsView {
  rows: LockRow[];
  /** Every lock this node knows; undefined before the first snapshot. */
  total: number | undefined;
  /** While the snapshot's table still comes in pages: what `rows` are (lock-table-query.ts); null once complete. */
  loading: TableLoading;
}

const EMPTY: LockRow[] = [];

/** The rows the table shows for these filters and this sort. */
export function useLockRows(filters: LockFilters, sort: LockSort): LockRowsView {
  const locks = useLocks();
  const paging = useTablePaging() ?? null;
  // Typing in the search box stays responsive with 10,000 locks: the table follows a beat later.
  // Not while the table loads: its rows then must be the current filters' (a deep link's first
  // rows come in a render that would still see the filters from before the URL was read).
  const lagging = useDeferredValue(filters);
  const deferred = paging === null ? lagging : filters;
  const clocked = filtersUseClock(deferred);
  const tick = useNow(clocked ? CLOCK_TICK_MS : IDLE_TICK_MS);
  const now = clocked ? tick : 0;
  // The search also finds locks by their waiters; an answer for an older search text is ignored
  // by the selection (WaiterHits.q), so the rows never mix two searches.
  const waiters = useWaiterSearch(deferred.q);
  const view = useMemo(
    () => (locks === undefined ? { rows: EMPTY, loading: null } : selectTableView(locks, deferred, sort, now, paging, waiters)),
    [locks, deferred, sort, now, paging, waiters],
  );
  return { rows: view.rows, total: locks?.size, loading: view.loading };
}
