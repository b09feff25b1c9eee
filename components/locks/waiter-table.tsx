import type { WaiterView } from '@/lib/ops-api/api-types.ts';
import { formatCountdown, formatDuration } from '@/lib/dashboard/dashboard-format.ts';
import { elapsedSince, remainingUntil } from '@/lib/dashboard/dashboard-state.ts';
import { useActionBlock, useDataNow } from '../data/use-data-now.ts';
import { PAGE_BEAT_MS } from '../data/use-now.ts';
import { buttonClass } from '../ui/button.ts';
import { QUEUE_PAGE_SHOWN } from '../data/api-client.ts';
import { ClientLink } from './client-link.tsx';
import { ClientName } from './client-name.tsx';

function WaitCells({ waiter, asOf, receivedAt }: { waiter: WaiterView; asOf: number; receivedAt: number }) {
  const now = useDataNow(PAGE_BEAT_MS);
  return (
    <>
      <td className="px-2 py-1.5 tabular-nums">{formatDuration(elapsedSince(waiter.waitingForMs, receivedAt, now))}</td>
      <td className="px-2 py-1.5 tabular-nums">
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
    <div className="relative overflow-x-auto">
      <table className="w-full min-w-[30rem] text-left text-xs">
        <caption className="sr-only">Waiters in FIFO order</caption>
        <thead className="text-slate-500 dark:text-slate-400">
          <tr>
            <th scope="col" className="px-2 py-1">
              #
            </th>
            <th scope="col" className="px-2 py-1">
              Id
            </th>
            <th scope="col" className="px-2 py-1">
              Protocol
            </th>
            <th scope="col" className="px-2 py-1">
              Client
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
        <tbody>
          {shown.map((w) => (
            <tr key={w.id} data-testid="waiter-row" data-waiter-id={w.id} className="border-t border-slate-100 dark:border-slate-800">
              <td className="px-2 py-1.5 tabular-nums">{w.position}</td>
              <td className="px-2 py-1.5 font-mono">{w.id}</td>
              <td className="px-2 py-1.5">{w.protocol}</td>
              <td className="px-2 py-1.5 font-mono break-all">
                {w.clientName !== null && (
                  <>
                    <ClientLink match={{ by: 'identity', value: w.clientName }}>
                      <ClientName name={w.clientName} />
                    </ClientLink>{' '}
                  </>
                )}
                <span className={w.clientName === null ? undefined : 'text-slate-600 dark:text-slate-400'}>{w.client}</span>
              </td>
              <WaitCells waiter={w} asOf={asOf} receivedAt={receivedAt} />
              <td className="px-2 py-1.5 text-right">
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
          ))}
        </tbody>
      </table>
      {queueLength > shown.length && (
        <p className="mt-2 text-xs text-slate-500 dark:text-slate-400" data-testid="queue-first-of">
          Showing the first {shown.length} of {queueLength} waiters.
        </p>
      )}
    </div>
  );
}
