import { useDeferredValue, useMemo } from 'react';
import type { LockRow } from '@/lib/dashboard/dashboard-state.ts';
import { filtersUseClock, type LockFilters, type LockSort, selectLockRows } from '@/lib/dashboard/lock-table-query.ts';
import { useLocks } from '../data/queries.ts';
import { useNow } from '../data/use-now.ts';

// The time filters ("lease ends within", "held longer than") move rows in and out as time passes:
// with one on, the selection is redone each second; with none, the clock is not read at all
// (an hourly ticker is the cheapest stand-in a hook can call unconditionally).
const CLOCK_TICK_MS = 1_000;
const IDLE_TICK_MS = 3_600_000;

export interface LockRowsView {
  rows: LockRow[];
  /** Every lock this node knows; undefined before the first snapshot. */
  total: number | undefined;
}

/** The rows the table shows for these filters and this sort. */
export function useLockRows(filters: LockFilters, sort: LockSort): LockRowsView {
  const locks = useLocks();
  // Typing in the search box stays responsive with 10,000 locks: the table follows a beat later.
  const deferred = useDeferredValue(filters);
  const clocked = filtersUseClock(deferred);
  const tick = useNow(clocked ? CLOCK_TICK_MS : IDLE_TICK_MS);
  const now = clocked ? tick : 0;
  const rows = useMemo(() => (locks === undefined ? [] : selectLockRows(locks, deferred, sort, now)), [locks, deferred, sort, now]);
  return { rows, total: locks?.size };
}
