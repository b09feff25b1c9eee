import { useVirtualizer } from '@tanstack/react-virtual';
import { useDeferredValue, useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { formatCount } from '@/lib/dashboard/dashboard-format.ts';
import { nextSort, selectLockRows, type LockSort, type LockSortKey } from '@/lib/dashboard/dashboard-state.ts';
import { useLocks } from '../data/queries.ts';
import { inputClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';
import { GRID_COLUMNS, ROW_HEIGHT, TABLE_MIN_WIDTH } from './columns.ts';
import { LockRowView } from './lock-row.tsx';

interface Column {
  label: string;
  sortKey?: LockSortKey;
}

const COLUMNS: Column[] = [
  { label: 'Name', sortKey: 'name' },
  { label: 'Holder' },
  { label: 'Token', sortKey: 'token' },
  { label: 'Held for', sortKey: 'heldFor' },
  { label: 'Lease left' },
  { label: 'Queue', sortKey: 'queue' },
  { label: 'Protocol' },
];

function SortHeader({ column, sort, onSort }: { column: Column; sort: LockSort; onSort: (key: LockSortKey) => void }) {
  const key = column.sortKey;
  if (key === undefined) return <div role="columnheader">{column.label}</div>;
  const active = sort.key === key;
  return (
    <div role="columnheader" aria-sort={active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        onClick={() => onSort(key)}
        className="inline-flex items-center gap-1 rounded font-semibold hover:text-sky-700 focus-visible:outline-2 focus-visible:outline-sky-500 dark:hover:text-sky-300"
      >
        {column.label}
        <span aria-hidden="true" className={cn('text-xs', !active && 'opacity-30')}>
          {active && sort.direction === 'desc' ? '▼' : '▲'}
        </span>
      </button>
    </div>
  );
}

// The sort state is announced through aria-sort on the column header; the button is named by its label.

/**
 * Every lock this node knows, searchable and sortable, virtualised so 10,000 rows cost as much as
 * the thirty on screen. Arrow keys move between rows' detail buttons.
 */
export function LockTable({ selected, onSelect }: { selected: string | null; onSelect: (name: string) => void }) {
  const locks = useLocks();
  const searchId = useId();
  const [query, setQuery] = useState('');
  const deferredQuery = useDeferredValue(query);
  const [sort, setSort] = useState<LockSort>({ key: 'name', direction: 'asc' });
  const rows = useMemo(() => (locks === undefined ? [] : selectLockRows(locks, deferredQuery, sort)), [locks, deferredQuery, sort]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    getItemKey: (index) => rows[index]?.summary.name ?? index,
  });

  // Where keyboard focus is headed while the target row is still being rendered: quick repeated
  // key presses count from there, not from the row that still has focus.
  const pendingFocus = useRef<number | null>(null);

  const focusRow = (index: number) => {
    const clamped = Math.max(0, Math.min(rows.length - 1, index));
    const find = () => scrollRef.current?.querySelector<HTMLButtonElement>(`[data-row-index="${clamped}"] button`) ?? null;
    virtualizer.scrollToIndex(clamped, { align: 'auto' });
    const now = find();
    if (now !== null) {
      now.focus();
      pendingFocus.current = null;
      return;
    }
    pendingFocus.current = clamped;
    const retry = (attempts: number) => {
      const button = find();
      if (button !== null) {
        button.focus();
        if (pendingFocus.current === clamped) pendingFocus.current = null;
      } else if (attempts > 0) requestAnimationFrame(() => retry(attempts - 1));
      else pendingFocus.current = null;
    };
    requestAnimationFrame(() => retry(5));
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const rowEl = (event.target as HTMLElement).closest<HTMLElement>('[data-row-index]');
    if (rowEl === null) return;
    const index = pendingFocus.current ?? Number(rowEl.dataset.rowIndex);
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? ROW_HEIGHT * 10) / ROW_HEIGHT) - 1);
    const moves: Record<string, number> = {
      ArrowDown: index + 1,
      ArrowUp: index - 1,
      PageDown: index + page,
      PageUp: index - page,
      Home: 0,
      End: rows.length - 1,
    };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    focusRow(target);
  };

  const total = locks?.size ?? 0;

  // What a screen reader hears: the number of matches, once per search, not on every delta.
  const [searchAnnouncement, setSearchAnnouncement] = useState('');
  const matchCount = useRef(0);
  matchCount.current = rows.length;
  useEffect(() => {
    const needle = deferredQuery.trim();
    setSearchAnnouncement(needle === '' ? '' : `${formatCount(matchCount.current)} ${matchCount.current === 1 ? 'lock matches' : 'locks match'} “${needle}”`);
  }, [deferredQuery]);
  return (
    <div className="flex min-w-0 flex-col gap-3">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div className="flex min-w-0 flex-col gap-1">
          <label htmlFor={searchId} className="text-xs text-slate-500 dark:text-slate-400">
            Search locks
          </label>
          <input
            id={searchId}
            type="search"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="Name contains…"
            className={cn(inputClass, 'w-64 max-w-full')}
          />
        </div>
        {/* Not a live region: the count moves with every delta, which would talk over everything. */}
        <p className="text-xs text-slate-500 tabular-nums dark:text-slate-400">
          {locks === undefined
            ? 'Waiting for data…'
            : deferredQuery.trim() === ''
              ? `${formatCount(total)} ${total === 1 ? 'lock' : 'locks'}`
              : `${formatCount(rows.length)} of ${formatCount(total)} locks`}
        </p>
        <p role="status" aria-live="polite" className="sr-only">
          {searchAnnouncement}
        </p>
      </div>
      <div
        role="table"
        aria-label="Locks"
        aria-rowcount={Math.max(rows.length, 1) + 1}
        className="relative overflow-x-auto rounded-md border border-slate-200 dark:border-slate-800"
      >
        <div className={TABLE_MIN_WIDTH}>
          <div role="rowgroup">
            <div
              role="row"
              aria-rowindex={1}
              className={cn(
                GRID_COLUMNS,
                'h-9 border-b border-slate-200 bg-slate-50 text-xs text-slate-600 dark:border-slate-800 dark:bg-slate-800/60 dark:text-slate-300',
              )}
            >
              {COLUMNS.map((c) => (
                <SortHeader key={c.label} column={c} sort={sort} onSort={(key) => setSort((s) => nextSort(s, key))} />
              ))}
            </div>
          </div>
          <div ref={scrollRef} role="rowgroup" onKeyDown={onKeyDown} className="max-h-[min(60vh,32rem)] min-h-24 overflow-y-auto">
            {rows.length === 0 ? (
              // A row and a cell, not a bare paragraph: a rowgroup may only hold rows (axe: aria-required-children).
              <div role="row" aria-rowindex={2}>
                <p role="cell" aria-colspan={COLUMNS.length} className="p-6 text-center text-sm text-slate-500 dark:text-slate-400">
                  {locks === undefined
                    ? 'Waiting for the first snapshot…'
                    : total === 0
                      ? 'No lock is held or waited for.'
                      : `No lock name contains “${deferredQuery.trim()}”.`}
                </p>
              </div>
            ) : (
              <div className="relative w-full" style={{ height: virtualizer.getTotalSize() }}>
                {virtualizer.getVirtualItems().map((item) => {
                  const row = rows[item.index];
                  if (row === undefined) return null;
                  return (
                    <LockRowView key={item.key} row={row} index={item.index} start={item.start} selected={row.summary.name === selected} onSelect={onSelect} />
                  );
                })}
              </div>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}
