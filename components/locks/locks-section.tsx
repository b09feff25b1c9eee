import { type ComponentType, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ClientMatchView } from '@/lib/dashboard/client-match.ts';
import { formatCount } from '@/lib/dashboard/dashboard-format.ts';
import { filtersActive, type LockFilters, type LockSortKey, nextSort } from '@/lib/dashboard/lock-table-query.ts';
import { MAX_HELD_S, parseViewParams, secondsParam } from '@/lib/dashboard/view-params.ts';
import { useNarrow } from '../data/use-narrow.ts';
import { useUrlDraft } from '../data/use-url-draft.ts';
import { useViewParams } from '../data/use-view-params.ts';
import { cn } from '../ui/cn.ts';
import { LockDetailPanel } from './lock-detail.tsx';
import { LockExportButtons } from './lock-export-buttons.tsx';
import { LockFiltersBar } from './lock-filters.tsx';
import { LockTable } from './lock-table.tsx';
import { TopContended } from './top-contended.tsx';
import { useLockRows } from './use-lock-rows.ts';

const heldSeconds = (text: string) => secondsParam(text.trim(), 0, MAX_HELD_S);

/** The client view (components/clients), handed in by the page: it uses this folder's parts, so this folder cannot import it. */
export type ClientPanel = ComponentType<{ match: ClientMatchView; onClose: () => void; onSelectLock: (name: string) => void }>;

/**
 * The table with its search, filters and export, and, once a lock is chosen, its detail beside
 * it (below it on narrow screens). The selection, search and filters are the URL's.
 */
export function LocksSection({ clientPanel: ClientViewPanel }: { clientPanel?: ClientPanel }) {
  const { view, update } = useViewParams();
  const selected = view.lock;
  const client = view.client;
  const compact = useNarrow();

  // The first keystroke of a search is a new history entry (Back clears it); the rest refine it.
  const commitSearch = useCallback((q: string) => update({ q }, view.q === '' ? 'push' : 'replace'), [update, view.q]);
  const [search, setSearch] = useUrlDraft(view.q, commitSearch);
  const heldUrl = view.heldLongerThanS === null ? '' : String(view.heldLongerThanS);
  const commitHeld = useCallback((text: string) => update({ heldLongerThanS: heldSeconds(text) }, heldUrl === '' ? 'push' : 'replace'), [update, heldUrl]);
  const [held, setHeld] = useUrlDraft(heldUrl, commitHeld);

  const filters: LockFilters = useMemo(
    () => ({ q: search, proto: view.proto, waiters: view.waiters, expiringWithinS: view.expiringWithinS, heldLongerThanS: heldSeconds(held) }),
    [search, view.proto, view.waiters, view.expiringWithinS, held],
  );
  // The sort is the URL's too: a reload or a pasted link keeps it, Back undoes a click.
  const sort = view.sort;
  const onSort = useCallback((key: LockSortKey) => update({ sort: nextSort(parseViewParams(window.location.search).sort, key) }, 'push'), [update]);
  const { rows, total, loading } = useLockRows(filters, sort);
  const narrowed = filtersActive(filters);

  const onSelect = useCallback((name: string) => update({ lock: name }, 'push'), [update]);
  // From the client view a lock opens its detail in the client view's place (Back returns to it).
  const onSelectFromClient = useCallback((name: string) => update({ lock: name, client: null }, 'push'), [update]);
  const onCloseClient = useCallback(() => update({ client: null }, 'push'), [update]);
  const onClose = useCallback(() => {
    const name = selected;
    update({ lock: null }, 'push');
    // Give focus back to the row the panel came from, when it is still on screen.
    if (name !== null)
      requestAnimationFrame(() => document.querySelector<HTMLButtonElement>(`[data-testid="lock-row"][data-lock="${CSS.escape(name)}"] button`)?.focus());
  }, [selected, update]);

  // What a screen reader hears: the number of matches once the filters settle, not on every delta.
  const [announcement, setAnnouncement] = useState('');
  const matchCount = useRef(0);
  matchCount.current = rows.length;
  const filterKey = narrowed ? JSON.stringify(filters) : '';
  useEffect(() => {
    const timer = setTimeout(() => {
      const n = matchCount.current;
      setAnnouncement(filterKey === '' ? '' : `${formatCount(n)} ${n === 1 ? 'lock matches' : 'locks match'} the search and filters`);
    }, 500);
    return () => clearTimeout(timer);
  }, [filterKey]);

  const emptyText =
    total === undefined
      ? 'Waiting for the first snapshot…'
      : loading !== null
        ? 'Loading the table…'
        : total === 0
          ? 'No lock is held or waited for.'
          : 'No lock matches the search and filters.';

  return (
    <section aria-labelledby="locks-heading" className="flex min-w-0 flex-col gap-2">
      <div className={cn('grid min-w-0 gap-4', (selected !== null || client !== null) && 'xl:grid-cols-[minmax(0,1fr)_26rem]')}>
        <div className="flex min-w-0 flex-col gap-3 rounded-lg border border-slate-200 bg-white p-3 shadow-sm dark:border-slate-800 dark:bg-slate-900">
          <div className="flex flex-wrap items-baseline justify-between gap-2">
            <h2 id="locks-heading" tabIndex={-1} className="text-lg font-semibold focus:outline-none">
              Locks
            </h2>
            {/* Not a live region: the count moves with every delta, which would talk over everything. */}
            <p className="text-xs text-slate-600 tabular-nums dark:text-slate-400" data-testid="lock-count">
              {total === undefined
                ? 'Waiting for data…'
                : loading !== null
                  ? `Loading… ${formatCount(loading.loaded)} of ${formatCount(loading.total)} locks`
                  : !narrowed
                    ? `${formatCount(total)} ${total === 1 ? 'lock' : 'locks'}`
                    : `${formatCount(rows.length)} of ${formatCount(total)} locks`}
            </p>
            <p role="status" aria-live="polite" className="sr-only">
              {announcement}
            </p>
            <LockExportButtons rows={rows} loading={loading !== null} />
          </div>
          {loading !== null && (
            // The rows before the snapshot's last page: the first by name (all of them up to the
            // last shown), or, in another order, the ones so far. Said on screen, not announced.
            <p data-testid="lock-table-loading" data-kind={loading.kind} className="text-xs text-amber-800 dark:text-amber-300">
              {loading.kind === 'first-by-name'
                ? 'The rest of the table is loading: these are its first locks by name.'
                : 'The table is still loading: the rows so far, not yet all of them.'}
            </p>
          )}
          <TopContended onSelect={onSelect} />
          <LockFiltersBar filters={filters} search={search} onSearch={setSearch} held={held} onHeld={setHeld} update={update} />
          <LockTable
            rows={rows}
            emptyText={emptyText}
            loading={loading !== null}
            sort={sort}
            onSort={onSort}
            selected={selected}
            onSelect={onSelect}
            compact={compact}
          />
        </div>
        {client !== null && ClientViewPanel !== undefined ? (
          <ClientViewPanel key={`${client.by}:${client.value}`} match={client} onClose={onCloseClient} onSelectLock={onSelectFromClient} />
        ) : (
          selected !== null && <LockDetailPanel key={selected} name={selected} onClose={onClose} />
        )}
      </div>
    </section>
  );
}
