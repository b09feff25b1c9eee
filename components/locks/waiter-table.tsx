import type { WaiterView } from '@/lib/ops-api/api-types.ts';
import { formatCountdown, formatDuration } from '@/lib/dashboard/dashboard-format.ts';
import { elapsedSince, remainingUntil } from '@/lib/dashboard/dashboard-state.ts';
import { useActionBlock, useDataNow } from '../data/use-data-now.ts';
import { PAGE_BEAT_MS } from '../data/use-now.ts';
import { buttonClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';
import { QUEUE_PAGE_SHOWN } from '../data/api-client.ts';
import { ClientLink } from './client-link.tsx';
import { ClientName } from './client-name.tsx';

function WaitCells({ waiter, asOf, receivedAt }: { waiter: WaiterView; asOf: number; receivedAt: number }) {
  const now = useDataNow(PAGE_BEAT_MS);
  return (
    <>
      <td className="px-2 pt-1.5 tabular-nums">{formatDuration(elapsedSince(waiter.waitingForMs, receivedAt, now))}</td>
      <td className="px-2 pt-1.5 tabular-nums">
        {waiter.waitDeadline === null ? 'none' : `in ${formatCountdown(remainingUntil(waiter.waitDeadline, asOf, receivedAt, now))}`}
        {waiter.reconnecting === true && (
          <span className="ml-1 text-amber-700 dark:text-amber-400" data-testid="waiter-reconnecting">
            reconnecting ({formatCountdown(Math.max(0, (waiter.reconnectRemainingMs ?? 0) - Math.max(0, now - receivedAt)))} left)
          </span>
        )}
      </td>
    </>
  );
}

/**
 * The waiter's identity over its address, each on one line across the whole row: a value too
 * long for it ends in an ellipsis and is whole in the tooltip, never broken mid-word (issue 30:
 * an identity or address broken across lines reads as another client).
 */
function ClientLine({ waiter }: { waiter: WaiterView }) {
  const title = waiter.clientName === null ? waiter.client : `${waiter.clientName} (${waiter.client})`;
  return (
    <td colSpan={5} className="px-2 pb-1.5 font-mono" title={title}>
      <span className="sr-only">Client: </span>
      {waiter.clientName !== null && (
        <span className="block truncate">
          <ClientLink match={{ by: 'identity', value: waiter.clientName }}>
            <ClientName name={waiter.clientName} />
          </ClientLink>
        </span>
      )}
      <span data-testid="client-address" className={cn('block truncate', waiter.clientName !== null && 'text-slate-600 dark:text-slate-400')}>
        {waiter.client}
      </span>
    </td>
  );
}

/**
 * The queue's first page in FIFO order (the server sends QUEUE_PAGE_SHOWN waiters at most: a
 * queue of 50,000 was 9 MB per read), each waiter with a Kick button (the panel confirms first:
 * kick-dialog.tsx); a longer queue says how many of how many are shown.
 */
export function WaiterTable({
  queue,
  queueLength,
  asOf,
  receivedAt,
  onKick,
  kicking,
}: {
  queue: readonly WaiterView[];
  /** The whole queue's length (the page may be shorter). */
  queueLength: number;
  asOf: number;
  receivedAt: number;
  onKick: (waiter: WaiterView) => void;
  kicking: string | null;
}) {
  const blocked = useActionBlock();
  if (queue.length === 0) return <p className="text-sm text-slate-500 dark:text-slate-400">Nobody is waiting.</p>;
  const shown = [...queue].sort((a, b) => a.position - b.position).slice(0, QUEUE_PAGE_SHOWN);
  return (
    // Two lines a waiter, so it fits the panel's width (26rem beside the table, a phone's below
    // it) without scrolling: its place, id, wait and Kick, then its client across the whole row.
    <div>
      <table className="w-full table-fixed text-left text-xs">
        <caption className="sr-only">Waiters in FIFO order, each with its client on a second line</caption>
        <colgroup>
          <col className="w-8" />
          <col />
          <col className="w-18" />
          <col className="w-22" />
          <col className="w-14" />
        </colgroup>
        <thead className="text-slate-500 dark:text-slate-400">
          <tr>
            <th scope="col" className="px-2 py-1">
              #
            </th>
            <th scope="col" className="px-2 py-1">
              Waiter
            </th>
            <th scope="col" className="px-2 py-1">
              Waiting
            </th>
            <th scope="col" className="px-2 py-1">
              Deadline
            </th>
            <th scope="col" className="px-2 py-1">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        {shown.map((w) => (
          <tbody key={w.id} data-testid="waiter-row" data-waiter-id={w.id} className="border-t border-slate-100 dark:border-slate-800">
            <tr>
              <td className="px-2 pt-1.5 tabular-nums">{w.position}</td>
              <td className="px-2 pt-1.5">
                <span className="font-mono">{w.id}</span> <span className="text-slate-600 dark:text-slate-400">{w.protocol}</span>
              </td>
              <WaitCells waiter={w} asOf={asOf} receivedAt={receivedAt} />
              <td className="px-2 pt-1.5 text-right">
                <button
                  type="button"
                  aria-label={`Kick waiter ${w.id}`}
                  className={buttonClass('secondary', 'px-2 py-0.5 text-xs')}
                  disabled={kicking === w.id || blocked !== null}
                  title={blocked ?? undefined}
                  onClick={() => onKick(w)}
                >
                  Kick
                </button>
              </td>
            </tr>
            <tr>
              <ClientLine waiter={w} />
            </tr>
          </tbody>
        ))}
      </table>
      {queueLength > shown.length && (
        <p className="mt-2 text-xs text-slate-500 dark:text-slate-400" data-testid="queue-first-of">
          Showing the first {shown.length} of {queueLength} waiters.
        </p>
      )}
    </div>
  );
}
