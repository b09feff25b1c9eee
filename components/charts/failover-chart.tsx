import { memo } from 'react';
import { CartesianGrid, Scatter, ScatterChart, Tooltip, XAxis, YAxis } from 'recharts';
import type { FailoverCause } from '@/lib/ops-api/cluster-vocabulary.ts';
import type { FailoverView, HistoryRange } from '@/lib/ops-api/api-types.ts';
import { durationTick, failoverDomain, type FailoverPoint, failoverPoints } from '@/lib/dashboard/dashboard-charts.ts';
import { carriedClaimsText, formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import { claimFatesText, gapText, stallText } from '@/lib/dashboard/transition-format.ts';
import { CHART_MARGIN, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { useChartPalette, type ChartPalette } from './palette.ts';
import { timeAxis } from './time-axis.ts';

const LIST_LIMIT = 5;

/** How people name the causes (the API's words are kebab-case). */
const CAUSE_LABEL: Record<FailoverCause, string> = {
  crash: 'crash',
  signal: 'signal',
  'api-handoff': 'API handoff',
  'priority-return': 'priority return',
  'split-brain': 'split brain',
};

function FailoverTooltip({ active, payload, palette }: { active?: boolean; payload?: ReadonlyArray<{ payload?: unknown }>; palette: ChartPalette }) {
  const point = payload?.[0]?.payload as FailoverPoint | undefined;
  if (!active || point === undefined) return null;
  return (
    <div
      style={{ background: palette.tooltipBg, border: `1px solid ${palette.tooltipBorder}`, color: palette.tooltipText }}
      className="rounded-md px-2 py-1 text-xs"
    >
      <div className="font-semibold">{formatClockTime(point.at)}</div>
      <div>{point.label}</div>
      <div>
        {CAUSE_LABEL[point.cause]}, {point.clients === undefined ? '' : `${stallText(point.clients)}, `}
        {gapText(point)}
      </div>
    </div>
  );
}

/** One failover's dot; the test hook is on the SVG element itself. */
function FailoverDot({ cx, cy, fill }: { cx?: number; cy?: number; fill?: string }) {
  if (cx === undefined || cy === undefined) return null;
  return <circle data-testid="failover-point" cx={cx} cy={cy} r={5} fill={fill} />;
}

/** The last few failovers as text, newest first. */
function RecentFailovers({ recent }: { recent: readonly FailoverPoint[] }) {
  return (
    <ol className="mt-3 flex flex-col gap-1 text-xs" aria-label="Recent failovers, newest first">
      {recent.map((f) => (
        <li key={`${f.at}-${f.to}`} data-testid="failover-item" className="flex flex-wrap gap-x-2">
          <span className="tabular-nums text-slate-500 dark:text-slate-400">{formatClockTime(f.at)}</span>
          <span className="font-mono">{f.label}</span>
          <span>{CAUSE_LABEL[f.cause]}</span>
          {/* What clients felt first; the daemon's gap named as what it is (it used to read "gap 6.3 ms" alone). */}
          {f.clients !== undefined && (
            <span className="font-semibold" data-testid="failover-stall">
              {stallText(f.clients)}
            </span>
          )}
          <span className="text-slate-500 dark:text-slate-400" data-testid="failover-gap">
            {gapText(f)}
          </span>
          {f.clients !== undefined && (
            <span className="text-slate-500 dark:text-slate-400" data-testid="failover-fates">
              {claimFatesText(f.clients)}
              {f.clients.finishedAt === null ? ' (settling…)' : ` (finished ${formatClockTime(f.clients.finishedAt)})`}
            </span>
          )}
          {carriedClaimsText(f) !== null && (
            <span className="text-slate-500 dark:text-slate-400" data-testid="failover-claims">
              {carriedClaimsText(f)}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}

/** Each failover as a point in time (height: how long no node was active), with a text list. */
export const FailoverChart = memo(function FailoverChart({
  failovers,
  asOf,
  range,
}: {
  failovers: readonly FailoverView[];
  asOf: number;
  range: HistoryRange;
}) {
  const p = useChartPalette();
  // Height: the longest client stall where it was measured, else the gap (older entries, a split brain).
  const points = failoverPoints(failovers).map((f) => ({ ...f, stallMs: f.clients?.longestStallMs ?? f.gapMs }));
  const [from, to] = failoverDomain(failovers, asOf, range);
  const recent = points.slice(-LIST_LIMIT).reverse();
  return (
    <ChartFrame
      title="Failovers"
      description="When the active node changed, and the longest stall its clients had (the gap with no active node is only its start)."
      testId="chart-failovers"
      empty={points.length === 0 ? 'No failovers yet' : null}
      after={recent.length > 0 && <RecentFailovers recent={recent} />}
    >
      <ScatterChart responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis dataKey="at" name="time" {...timeAxis(p, from, to)} />
        {/* Ticks like "1.2 s" rather than "1,234 ms", on a wider axis: the old ones were clipped. */}
        <YAxis
          dataKey="stallMs"
          type="number"
          stroke={p.axis}
          tick={{ fontSize: 11 }}
          width={Y_AXIS_WIDTH}
          name="client stall"
          tickFormatter={durationTick}
          label={yTitle(p, 'client stall')}
        />
        <Tooltip content={(props) => <FailoverTooltip active={props.active} payload={props.payload} palette={p} />} />
        <Scatter
          data={points}
          fill={p.failover}
          isAnimationActive={false}
          shape={(props: { cx?: number; cy?: number }) => <FailoverDot cx={props.cx} cy={props.cy} fill={p.failover} />}
        />
      </ScatterChart>
    </ChartFrame>
  );
});
