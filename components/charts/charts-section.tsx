import { useCallback, useMemo, useRef, useState } from 'react';
import { type DurationScale, parseRangeParam, rangeParam } from '@/lib/dashboard/chart-scale.ts';
import { holdSeries, latencySeries, queueWaitSeries, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatCount } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import { useCluster, useHistory, useStatsHistory, type HistoryView } from '../data/queries.ts';
import { useThrottled } from '../data/use-throttled.ts';
import { useQueryParam } from '../data/use-view-params.ts';
import { BlockedChart } from './blocked-chart.tsx';
import { FailoverChart } from './failover-chart.tsx';
import { GrantsChart } from './grants-chart.tsx';
import { PercentileChart } from './percentile-chart.tsx';
import { RangePicker } from './range-picker.tsx';
import { ScalePicker } from './scale-picker.tsx';
import { BELOW_THE_FOLD } from '../ui/below-the-fold.ts';
import { cn } from '../ui/cn.ts';
import { useNearViewport } from '../ui/use-near-viewport.ts';

function waitedShare(count: number, waited: number): string {
  return count === 0 ? '' : ` ${Math.round((100 * waited) / count)}% of ${formatCount(count)} grants queued.`;
}

/**
 * The charts, two by two on wide screens, stacked on phones, over the picked range. The 5-minute
 * range draws from the event stream (live); 1 h and 24 h, and every range's merged by-cause
 * figures, come from GET /api/v1/stats/history, asked again once per bucket. The range is in the
 * URL (`range=1h`), so a reload or a pasted link keeps it; the duration axis is log by default.
 */
export function ChartsSection() {
  const [rangeText, setRangeText] = useQueryParam('range');
  const range = parseRangeParam(rangeText);
  const setRange = useCallback((next: HistoryRange) => setRangeText(rangeParam(next), 'push'), [setRangeText]);
  const [scale, setScale] = useState<DurationScale>('log');
  // Redraw at most once a second, and not at all while scrolled far away; the first snapshot
  // shows at once.
  const sectionRef = useRef<HTMLElement>(null);
  const near = useNearViewport(sectionRef);
  const live = useThrottled(useHistory(), 1_000, !near);
  const cluster = useCluster();
  const fetched = useStatsHistory(range).data;
  const view: HistoryView | undefined = useMemo(
    () => (range === '5m' ? live : fetched !== undefined && fetched.range === range ? { history: fetched.buckets, asOf: fetched.asOf } : undefined),
    [range, live, fetched],
  );
  const summary = fetched?.range === range ? fetched.summary : undefined;
  // The series only change with the (throttled) view: memoised, so the memoised charts do not
  // redraw their SVG on every delta the section re-renders for (ten a second, per open page).
  const series = useMemo(
    () =>
      view === undefined
        ? undefined
        : {
            wait: queueWaitSeries(view.history, view.asOf, range),
            hold: holdSeries(view.history, view.asOf, range),
            latency: latencySeries(view.history, view.asOf, range),
          },
    [view, range],
  );
  return (
    <section ref={sectionRef} aria-labelledby="charts-heading" className={cn('flex min-w-0 flex-col gap-3', BELOW_THE_FOLD)}>
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="charts-heading" className="text-lg font-semibold">
          Trends
        </h2>
        <div className="flex flex-wrap items-center gap-3">
          <ScalePicker value={scale} onChange={setScale} />
          <RangePicker value={range} onChange={setRange} />
        </div>
      </div>
      {view === undefined || series === undefined || cluster === undefined ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{range === '5m' ? 'Waiting for the first snapshot…' : 'Loading the history…'}</p>
      ) : (
        <div className="grid min-w-0 gap-4 md:grid-cols-2" data-range={range} data-testid="charts-grid">
          <PercentileChart
            title="Queue wait"
            description={`Enqueued → granted, p50 and p99 of the grants that queued.${summary ? waitedShare(summary.queueWait.count, summary.queueWait.waited) : ''}`}
            testId="chart-queue-wait"
            yLabel="queue wait"
            empty={`No grant queued in the last ${RANGE_SPECS[range].label}`}
            points={series.wait}
            asOf={view.asOf}
            range={range}
            scale={scale}
          />
          <BlockedChart blocked={summary?.blocked} range={range} />
          <PercentileChart
            title="Hold time"
            description="Granted → released, closed, expired or force-released, p50 and p99 of the holders that ended."
            testId="chart-hold"
            yLabel="hold time"
            empty="No holder ended in this range"
            points={series.hold}
            asOf={view.asOf}
            range={range}
            scale={scale}
          />
          <PercentileChart
            title="In-daemon handover (free → next grant)"
            description="Measured inside the daemon from the previous holder's end to the next grant: a release hands over in the same step (< 1 µs), an expiry waits for the timer. Not what a waiter lived through: see blocked time."
            testId="chart-latency"
            yLabel="handover"
            empty="No handovers in this range"
            points={series.latency}
            asOf={view.asOf}
            range={range}
            scale={scale}
          />
          <GrantsChart view={view} range={range} />
          <FailoverChart failovers={cluster.failovers} asOf={view.asOf} range={range} />
        </div>
      )}
    </section>
  );
}
