import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { formatCount, formatDuration } from '@/lib/dashboard/dashboard-format.ts';
import { CONTENTION_RANGES, type ContentionRange } from '@/lib/ops-api/lock-views-types.ts';
import { opsApi, retryUnlessClientError } from '../data/api-client.ts';
import { ClientLink } from './client-link.tsx';
import { buttonClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';

/** Locks each list shows. */
export const TOP_SHOWN = 5;
/** How often the view asks again: queues move by the second. */
const REFRESH_MS = 2_000;

/** The charts' range when the URL names one the view keeps (1 h or 24 h); else the last hour. */
function initialRange(): ContentionRange {
  if (typeof window === 'undefined') return '1h';
  const range = new URLSearchParams(window.location.search).get('range');
  return range === '24h' ? '24h' : '1h';
}

const RANGE_TEXT: Record<ContentionRange, string> = { '1h': '1 h', '24h': '24 h' };

function LockButton({ name, onSelect }: { name: string; onSelect: (name: string) => void }) {
  return (
    <button
      type="button"
      onClick={() => onSelect(name)}
      aria-label={`Details for ${name}`}
      className="max-w-full truncate rounded text-left font-mono font-medium text-sky-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-500 dark:text-sky-300"
    >
      <LockName name={name} />
    </button>
  );
}

const listClass = 'flex min-w-0 flex-col divide-y divide-slate-100 text-xs dark:divide-slate-800';
const rowClass = 'flex min-w-0 items-baseline justify-between gap-2 py-1';

/**
 * The most contended locks, above the table: the longest queues now, and the locks whose waiters
 * waited longest over the last hour or day (GET /api/v1/contention). A table sorted by name put
 * 200 locks of a stuck client above the few everyone waits for; these lists do not.
 */
export function TopContended({ onSelect }: { onSelect: (name: string) => void }) {
  const [range, setRange] = useState<ContentionRange>(initialRange);
  const query = useQuery({
    queryKey: ['ops', 'contention', range],
    queryFn: () => opsApi.contention(range, TOP_SHOWN),
    refetchInterval: REFRESH_MS,
    retry: retryUnlessClientError,
  });
  const view = query.data;
  if (view === undefined || (view.now.length === 0 && view.over.length === 0)) {
    return (
      <p className="text-xs text-slate-600 dark:text-slate-400" data-testid="top-contended-empty">
        {view === undefined ? (query.error === null ? '' : `Contended locks: ${query.error.message}`) : 'No lock is contended now or over the range.'}
      </p>
    );
  }
  return (
    <section
      aria-labelledby="top-contended-heading"
      data-testid="top-contended"
      className="grid min-w-0 gap-x-6 gap-y-2 rounded-md bg-slate-50 p-2 sm:grid-cols-2 dark:bg-slate-800/40"
    >
      <div className="flex min-w-0 flex-col gap-1">
        <h3 id="top-contended-heading" className="text-sm font-semibold">
          Longest queues now <span className="font-normal text-slate-600 dark:text-slate-400">({formatCount(view.queuedLocks)} locks have a queue)</span>
        </h3>
        <ol className={listClass} data-testid="contended-now">
          {view.now.map((l) => (
            <li key={l.name} className={rowClass} data-testid="contended-now-row" data-name={l.name}>
              <span className="flex min-w-0 flex-col">
                <LockButton name={l.name} onSelect={onSelect} />
                {l.holder !== null && (
                  <span className="truncate text-slate-600 dark:text-slate-400">
                    held by{' '}
                    <ClientLink
                      match={l.holder.clientName === null ? { by: 'address', value: l.holder.client } : { by: 'identity', value: l.holder.clientName }}
                      className="font-mono"
                    >
                      {l.holder.clientName === null ? l.holder.client : <ClientName name={l.holder.clientName} />}
                    </ClientLink>
                  </span>
                )}
              </span>
              <span className="shrink-0 text-right tabular-nums">
                <span data-testid="contended-queue">{l.queueLength}</span> waiting, first for {formatDuration(l.longestWaitMs)}
              </span>
            </li>
          ))}
        </ol>
      </div>
      <div className="flex min-w-0 flex-col gap-1">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h3 className="text-sm font-semibold">Most waited for, last {RANGE_TEXT[range]}</h3>
          <fieldset className="flex gap-1">
            <legend className="sr-only">Contention range</legend>
            {CONTENTION_RANGES.map((r) => (
              <button
                key={r}
                type="button"
                aria-pressed={r === range}
                onClick={() => setRange(r)}
                className={cn(
                  buttonClass('ghost', 'px-2 py-0.5 text-xs'),
                  r === range && 'bg-sky-700 text-white hover:bg-sky-800 dark:bg-sky-400 dark:text-slate-950',
                )}
              >
                {RANGE_TEXT[r]}
              </button>
            ))}
          </fieldset>
        </div>
        <ol className={listClass} data-testid="contended-over">
          {view.over.map((l) => (
            <li key={l.name} className={rowClass} data-testid="contended-over-row" data-name={l.name}>
              <LockButton name={l.name} onSelect={onSelect} />
              <span className="shrink-0 text-right tabular-nums">
                {formatCount(l.queuedGrants)} queued grants, longest wait {formatDuration(l.maxWaitMs)}, queue up to {l.maxQueue}
              </span>
            </li>
          ))}
        </ol>
      </div>
    </section>
  );
}
