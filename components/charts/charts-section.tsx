import { useCluster, useHistory, useStats } from '../data/queries.ts';
import { useThrottled } from '../data/use-throttled.ts';
import { CauseChart } from './cause-chart.tsx';
import { FailoverChart } from './failover-chart.tsx';
import { GrantsChart } from './grants-chart.tsx';
import { LatencyChart } from './latency-chart.tsx';

/**
 * The four charts, two by two on wide screens, stacked on phones. This section re-renders with
 * every delta (useHistory); the charts are memoised, so they redraw only when the throttled view
 * (or the failover list) changes.
 */
export function ChartsSection() {
  // Redraw at most once a second; the first snapshot shows at once.
  const view = useThrottled(useHistory(), 1_000);
  const cluster = useCluster();
  // Throttled like the history: the bars change only when a handover is recorded.
  const byCause = useThrottled(useStats()?.handoverByCause, 1_000);
  return (
    <section aria-labelledby="charts-heading" className="flex min-w-0 flex-col gap-3">
      <h2 id="charts-heading" className="text-lg font-semibold">
        Trends
      </h2>
      {view === undefined || cluster === undefined || byCause === undefined ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">Waiting for the first snapshot…</p>
      ) : (
        <div className="grid min-w-0 gap-4 md:grid-cols-2">
          <LatencyChart view={view} />
          <CauseChart byCause={byCause} />
          <GrantsChart view={view} />
          <FailoverChart failovers={cluster.failovers} asOf={view.asOf} />
        </div>
      )}
    </section>
  );
}
