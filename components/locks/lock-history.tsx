import { END_LABEL, lockHistoryCsv, lockHistoryJson } from '@/lib/dashboard/lock-history-export.ts';
import { formatClockTime, formatSpan } from '@/lib/dashboard/dashboard-format.ts';
import type { LockHistory } from '@/lib/ops-api/api-types.ts';
import { useLockHistory } from '../data/queries.ts';
import { buttonClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';
import { ClientName } from './client-name.tsx';
import { WORD_WRAPPED } from './unbroken.ts';
import { saveExport } from '../ui/download.ts';

function Percentiles({ label, p }: { label: string; p: { p50: number | null; p99: number | null } }) {
  return (
    <span>
      {label} p50 <span className="tabular-nums">{formatSpan(p.p50)}</span>, p99 <span className="tabular-nums">{formatSpan(p.p99)}</span>
    </span>
  );
}

function exportHistory(history: LockHistory, kind: 'csv' | 'json'): void {
  saveExport(`history-${history.name}`, history.asOf, kind, kind === 'csv' ? lockHistoryCsv(history) : lockHistoryJson(history));
}

/** "none" for a grant that did not queue; ms below a second, then "1.5 s", "2 m 05 s". */
function formatWait(ms: number): string {
  return ms === 0 ? 'none' : formatSpan(ms);
}

const TH = 'px-2 py-1';
const TD = 'px-2 py-1.5';

/**
 * The lock's last 50 ended grants (GET /api/v1/locks/{name}/history), newest first: who held it,
 * with which token, how long it waited and held, and how it ended; kicked waiters are listed too.
 * Refetched when the stream says the lock changed (the key sits under the detail's).
 */
export function LockHistoryTable({ name }: { name: string }) {
  const query = useLockHistory(name);
  const history = query.data;
  return (
    <div className="flex flex-col gap-2" data-testid="lock-history">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase dark:text-slate-400">
          Last grants{history ? ` (${history.grants.length})` : ''}
        </h4>
        <div className="flex gap-2">
          <button
            type="button"
            className={buttonClass('secondary', 'px-2 py-0.5 text-xs')}
            disabled={history === undefined}
            onClick={() => history && exportHistory(history, 'json')}
          >
            Export JSON
          </button>
          <button
            type="button"
            className={buttonClass('secondary', 'px-2 py-0.5 text-xs')}
            disabled={history === undefined}
            onClick={() => history && exportHistory(history, 'csv')}
          >
            Export CSV
          </button>
        </div>
      </div>
      {query.isError && <p className="text-sm text-red-700 dark:text-red-300">Could not load the history: {query.error.message}</p>}
      {history === undefined ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{query.isPending ? 'Loading…' : ''}</p>
      ) : history.grants.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">No ended grant recorded on this node.</p>
      ) : (
        <>
          <p className="flex flex-wrap gap-x-4 text-xs text-slate-600 dark:text-slate-300" data-testid="lock-history-summary">
            <Percentiles label="Queue wait" p={history.queueWait} />
            <Percentiles label="Held (ended grants)" p={history.hold} />
          </p>
          {/* Focusable, so a keyboard can scroll it when it overflows (axe: scrollable-region-focusable). */}
          <div
            className="relative max-h-80 overflow-auto focus-visible:outline-2 focus-visible:outline-sky-500"
            tabIndex={0}
            role="region"
            aria-label="Grant history"
          >
            <table className="w-full min-w-[36rem] text-left text-xs">
              <caption className="sr-only">Last ended grants of the lock, newest first</caption>
              <thead className="sticky top-0 bg-white text-slate-500 dark:bg-slate-900 dark:text-slate-400">
                <tr>
                  <th scope="col" className={TH}>
                    Ended
                  </th>
                  <th scope="col" className={TH}>
                    Client
                  </th>
                  <th scope="col" className={TH}>
                    Token
                  </th>
                  <th scope="col" className={TH}>
                    Queue wait
                  </th>
                  <th scope="col" className={TH}>
                    Held
                  </th>
                  <th scope="col" className={TH}>
                    How it ended
                  </th>
                </tr>
              </thead>
              <tbody>
                {history.grants.map((g) => (
                  <tr key={`${g.claimId}-${g.endedAt}`} data-testid="history-row" data-end={g.end} className="border-t border-slate-100 dark:border-slate-800">
                    <td className={`${TD} tabular-nums`}>{formatClockTime(g.endedAt)}</td>
                    {/* Wraps between words only (never inside an identity's word or an address); the region scrolls. */}
                    <td className={TD}>
                      {g.clientName !== null && (
                        <span className={cn('font-semibold', WORD_WRAPPED)} title={g.clientName}>
                          <ClientName name={g.clientName} />{' '}
                        </span>
                      )}
                      <span className="font-mono">
                        {g.client} ({g.protocol})
                      </span>
                    </td>
                    <td className={`${TD} font-mono whitespace-nowrap`} data-testid="history-token">
                      {g.token ?? '—'}
                    </td>
                    <td className={`${TD} tabular-nums`}>{formatWait(g.queueWaitMs)}</td>
                    <td className={`${TD} tabular-nums`}>{g.heldMs === null ? '—' : formatSpan(g.heldMs)}</td>
                    <td className={TD}>{END_LABEL[g.end]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}
