import { memo } from 'react';
import { formatDuration, formatLeaseLeft } from '@/lib/dashboard/dashboard-format.ts';
import { heldForAt, leaseRemainingAt, type LockRow } from '@/lib/dashboard/dashboard-state.ts';
import { useDataNow } from '../data/use-data-now.ts';
import { PAGE_BEAT_MS } from '../data/use-now.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';
import { CARD_HEIGHT, CARD_LAYOUT, GRID_COLUMNS, ROW_HEIGHT } from './columns.ts';
import { ClientLink } from './client-link.tsx';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';

/** Held-for and lease cells: the only parts of a row that change between messages. */
/** On a card, a cell says what it is ("token 42"); in the table its column header does. */
function CardLabel({ compact, children }: { compact: boolean; children: string }) {
  if (!compact) return null;
  return (
    <>
      <span className="text-xs text-slate-600 dark:text-slate-400">{children}</span>{' '}
    </>
  );
}

function LiveCells({ row, compact }: { row: LockRow; compact: boolean }) {
  const now = useDataNow(PAGE_BEAT_MS);
  const held = heldForAt(row, now);
  const lease = leaseRemainingAt(row, now);
  const sliding = row.summary.holder?.sliding ?? false;
  return (
    <>
      {/* A card keeps to three lines: token, lease left and queue matter most there (the detail has the rest). */}
      <div role="cell" className={cn('tabular-nums', compact && 'sr-only')}>
        {compact && 'held for '}
        {held === null ? '—' : formatDuration(held)}
      </div>
      <div
        role="cell"
        className={cn('tabular-nums', compact && 'order-3', lease !== null && lease < 2_000 && 'font-semibold text-amber-700 dark:text-amber-300')}
      >
        <span data-testid="lease-countdown">{lease === null ? '—' : formatLeaseLeft(lease)}</span>
        {sliding && (
          <span className="ml-1 text-slate-400" title="Sliding lease: each heartbeat renews it">
            <span aria-hidden="true">↻</span>
            <span className="sr-only"> (sliding)</span>
          </span>
        )}
      </div>
    </>
  );
}

export interface LockRowProps {
  row: LockRow;
  index: number;
  /** Pixel offset inside the virtual list. */
  start: number;
  selected: boolean;
  onSelect: (name: string) => void;
  /** Phone width: a card instead of a table row. */
  compact: boolean;
}

/**
 * A resumable session claim whose connection is gone (its node handed off or died): the lock
 * stays its client's until the lease (the countdown beside it) runs out or the client resumes.
 */
export function ReconnectingBadge() {
  return (
    <Badge tone="warn" className="mr-1">
      <span data-testid="holder-reconnecting" title="Connection gone (handoff or failover): kept for its client to resume until the lease runs out">
        reconnecting
      </span>
    </Badge>
  );
}

/** One lock. Memoised: a delta re-renders only the rows whose summary it replaced. */
export const LockRowView = memo(function LockRowView({ row, index, start, selected, onSelect, compact }: LockRowProps) {
  const { name, holder, queueLength } = row.summary;
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      data-testid="lock-row"
      data-lock={name}
      data-row-index={index}
      onClick={() => onSelect(name)}
      style={{ height: compact ? CARD_HEIGHT : ROW_HEIGHT, transform: `translateY(${start}px)` }}
      className={cn(
        compact ? CARD_LAYOUT : GRID_COLUMNS,
        'absolute top-0 left-0 w-full cursor-pointer border-b border-slate-100 text-sm dark:border-slate-800',
        selected ? 'bg-sky-50 dark:bg-sky-950/60' : 'hover:bg-slate-50 dark:hover:bg-slate-800/50',
      )}
    >
      <div role="cell" className={cn('min-w-0', compact && 'basis-[calc(100%-6rem)]')}>
        <button
          type="button"
          aria-label={`Details for ${name}`}
          aria-current={selected ? 'true' : undefined}
          onClick={(e) => {
            e.stopPropagation();
            onSelect(name);
          }}
          className="max-w-full truncate rounded text-left font-mono font-medium text-sky-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-500 dark:text-sky-300"
          title={name}
        >
          <LockName name={name} />
        </button>
      </div>
      <div
        role="cell"
        className={cn('min-w-0 truncate font-mono text-xs', compact && 'order-1 basis-full')}
        title={holder === null ? undefined : holder.clientName === null ? holder.client : `${holder.clientName} (${holder.client})`}
      >
        {holder === null ? (
          <span className="text-slate-600 dark:text-slate-400">no holder</span>
        ) : (
          <>
            {holder.reconnecting === true && <ReconnectingBadge />}
            {/* The identity (or the address of a client that gave none) opens the client view. */}
            {holder.clientName !== null ? (
              <>
                <ClientLink match={{ by: 'identity', value: holder.clientName }} className="align-bottom">
                  <ClientName name={holder.clientName} />
                </ClientLink>{' '}
                <span className="text-slate-600 dark:text-slate-400">{holder.client}</span>
              </>
            ) : (
              <ClientLink match={{ by: 'address', value: holder.client }} className="align-bottom">
                {holder.client}
              </ClientLink>
            )}{' '}
            <span className="text-slate-600 dark:text-slate-400">({holder.protocol})</span>
          </>
        )}
      </div>
      <div role="cell" className={cn('min-w-0 truncate font-mono tabular-nums', compact && 'order-2')}>
        <CardLabel compact={compact}>token</CardLabel>
        {holder === null ? '—' : <span data-testid="holder-token">{holder.token}</span>}
      </div>
      <LiveCells row={row} compact={compact} />
      <div role="cell" className={cn('tabular-nums', compact && 'order-4')} data-testid="queue-length">
        <CardLabel compact={compact}>queue</CardLabel>
        {queueLength}
      </div>
      <div role="cell" className={cn(compact && 'ml-auto')}>
        {holder === null ? '—' : <Badge>{holder.protocol}</Badge>}
      </div>
    </div>
  );
});
