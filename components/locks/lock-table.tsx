import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, type KeyboardEvent } from 'react';
import type { LockRow } from '@/lib/dashboard/dashboard-state.ts';
import type { LockSort, LockSortKey } from '@/lib/dashboard/lock-table-query.ts';
import { cn } from '../ui/cn.ts';
import { CARD_HEIGHT, GRID_COLUMNS, ROW_HEIGHT, TABLE_MIN_WIDTH } from './columns.ts';
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
  { label: 'Lease left', sortKey: 'leaseLeft' },
  { label: 'Queue', sortKey: 'queue' },
  { label: 'Protocol' },
];

function SortHeader({ column, sort, onSort, compact }: { column: Column; sort: LockSort; onSort: (key: LockSortKey) => void; compact: boolean }) {
  const key = column.sortKey;
  // On a card the unsortable headers would label nothing: the cells say what they are.
  if (key === undefined)
    return (
      <div role="columnheader" className={cn(compact && 'sr-only')}>
        {column.label}
      </div>
    );
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

export interface LockTableProps {
  rows: readonly LockRow[];
  /** Why there is no row: waiting, no lock at all, or nothing matches. */
  emptyText: string;
  /** The snapshot's table is still coming: more rows will follow the ones shown. */
  loading?: boolean;
  sort: LockSort;
  onSort(key: LockSortKey): void;
  selected: string | null;
  onSelect(name: string): void;
  /** Phone width: each lock is a card. */
  compact: boolean;
}

/**
 * The locks the search and filters keep, virtualised so 10,000 rows cost as much as the thirty
 * on screen. Arrow keys move between rows' detail buttons.
 */
export function LockTable({ rows, emptyText, loading = false, sort, onSort, selected, onSelect, compact }: LockTableProps) {
  const rowHeight = compact ? CARD_HEIGHT : ROW_HEIGHT;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 8,
    getItemKey: (index) => rows[index]?.summary.name ?? index,
  });
  // Turning the phone (cards) into a wide window (rows) changes every row's height.
  useEffect(() => {
    if (rowHeight > 0) virtualizer.measure();
  }, [rowHeight, virtualizer]);

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
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? rowHeight * 10) / rowHeight) - 1);
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

  return (
    <div
      role="table"
      aria-label="Locks"
      aria-busy={loading || undefined}
      aria-rowcount={loading ? -1 : Math.max(rows.length, 1) + 1}
      className={cn('relative rounded-md border border-slate-200 dark:border-slate-800', !compact && 'overflow-x-auto')}
    >
      <div className={cn(!compact && TABLE_MIN_WIDTH)}>
        <div role="rowgroup">
          <div
            role="row"
            aria-rowindex={1}
            className={cn(
              compact ? 'flex flex-wrap items-center gap-x-3 px-3 py-1.5' : cn(GRID_COLUMNS, 'h-9'),
              'border-b border-slate-200 bg-slate-50 text-xs text-slate-600 dark:border-slate-800 dark:bg-slate-800/60 dark:text-slate-300',
            )}
          >
            {COLUMNS.map((c) => (
              <SortHeader key={c.label} column={c} sort={sort} onSort={onSort} compact={compact} />
            ))}
          </div>
        </div>
        <div ref={scrollRef} role="rowgroup" onKeyDown={onKeyDown} className="max-h-[min(60vh,32rem)] min-h-24 overflow-y-auto">
          {rows.length === 0 ? (
            // A row and a cell, not a bare paragraph: a rowgroup may only hold rows (axe: aria-required-children).
            <div role="row" aria-rowindex={2}>
              <p role="cell" aria-colspan={COLUMNS.length} className="p-6 text-center text-sm text-slate-500 dark:text-slate-400">
                {emptyText}
              </p>
            </div>
          ) : (
            <div className="relative w-full" style={{ height: virtualizer.getTotalSize() }}>
              {virtualizer.getVirtualItems().map((item) => {
                const row = rows[item.index];
                if (row === undefined) return null;
                return (
                  <LockRowView
                    key={item.key}
                    row={row}
                    index={item.index}
                    start={item.start}
                    selected={row.summary.name === selected}
                    onSelect={onSelect}
                    compact={compact}
                  />
                );
              })}
            </div>
          )}
          {loading && rows.length > 0 && (
            <div role="row" data-testid="lock-rows-loading">
              <p role="cell" aria-colspan={COLUMNS.length} className="p-2 text-center text-xs text-slate-500 dark:text-slate-400">
                Loading more locks…
              </p>
            </div>
          )}
        </div>
      </div>
    </div>
  );
}
