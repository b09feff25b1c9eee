import { formatCount, formatLatency, groupDigits } from '@/lib/dashboard/dashboard-format.ts';
import { ERRORS } from '@/lib/errors.ts';
import { useStats } from '../data/queries.ts';
import { Card, Waiting } from '../ui/card.tsx';
import { Stat } from '../ui/stat.tsx';

/** Lock and connection totals and the token high-water mark. */
export function TotalsCard() {
  const stats = useStats();
  if (stats === undefined)
    return (
      <Card title="Totals">
        <Waiting />
      </Card>
    );
  return (
    <Card title="Totals">
      {stats.grants !== 'ok' && (
        // Why this node grants nothing now: the same words clients get (lib/errors.ts).
        <p
          role="alert"
          data-testid="grants-refused"
          className="mb-3 rounded border border-red-300 bg-red-50 p-2 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          Grants refused ({stats.grants}): {ERRORS[stats.grants].message}.
          {stats.grants === 'storage-unavailable'
            ? ' Retried every second; granting resumes when the data dir can be written.'
            : ' Releases, probes and this console still work.'}
        </p>
      )}
      <dl className="grid grid-cols-3 gap-3">
        <Stat label="Locks" testId="total-locks">
          {formatCount(stats.locks)}
        </Stat>
        <Stat label="Held">{formatCount(stats.held)}</Stat>
        <Stat label="Waiters">{formatCount(stats.waiters)}</Stat>
        <Stat label="Keyed conns">{formatCount(stats.connections.keyed)}</Stat>
        <Stat label="Session conns">{formatCount(stats.connections.session)}</Stat>
        <Stat label="Grants">{formatCount(stats.grantsTotal)}</Stat>
      </dl>
      <dl className="mt-3 border-t border-slate-200 pt-3 dark:border-slate-800">
        <Stat label="Token high-water mark">
          <span className="font-mono text-base" title={stats.tokenHighWater}>
            {groupDigits(stats.tokenHighWater)}
          </span>
        </Stat>
      </dl>
    </Card>
  );
}

/** Handover latency right now (the server's last 60 seconds). */
export function LatencyCard() {
  const stats = useStats();
  if (stats === undefined)
    return (
      <Card title="Handover latency">
        <Waiting />
      </Card>
    );
  const h = stats.handover;
  return (
    <Card title="Handover latency">
      <dl className="grid grid-cols-3 gap-3">
        <Stat label="p50" testId="handover-p50">
          {formatLatency(h.p50)}
        </Stat>
        <Stat label="p95" testId="handover-p95">
          {formatLatency(h.p95)}
        </Stat>
        <Stat label="p99" testId="handover-p99">
          {formatLatency(h.p99)}
        </Stat>
      </dl>
      <p className="mt-3 text-xs text-slate-500 dark:text-slate-400">
        {h.count === 0 ? 'No handovers in the last 60 s.' : `${formatCount(h.count)} handover${h.count === 1 ? '' : 's'} in the last 60 s.`}
      </p>
    </Card>
  );
}
