import { memo } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { durationAxis } from '@/lib/dashboard/chart-scale.ts';
import { causeLatency, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import type { CauseLatency, HandoverCause, HistoryRange } from '@/lib/ops-api/api-types.ts';
import { CHART_MARGIN, xTitle, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { formatMs } from './percentile-chart.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';

/**
 * Blocked time by what ended the previous holder, over the picked range (the server merges the
 * range's histograms): how long the next waiter stood behind a free-but-owed lock or a dead
 * holder. An expiry's bar is the rest of the silent holder's lease; the others hand over in the
 * same step.
 */
export const BlockedChart = memo(function BlockedChart({ blocked, range }: { blocked: Record<HandoverCause, CauseLatency> | undefined; range: HistoryRange }) {
  const p = useChartPalette();
  // The count under each cause: a release's bar is 0 (it blocks nobody), which must not read as "no data".
  const points = (blocked === undefined ? [] : causeLatency(blocked)).map((c) => ({ ...c, label: `${c.cause} (${c.count})` }));
  const hasHandovers = points.some((c) => c.count > 0);
  // Bars stand on 0, so a linear axis, with ticks in whole steps of one unit ("0, 30 s, 60 s").
  const axis = durationAxis('linear', null, Math.max(0, ...points.map((c) => c.p99 ?? c.p50 ?? 0)));
  return (
    <ChartFrame
      title="Blocked time by cause"
      description={`How long the next waiter stood behind a dead holder or a free-but-owed lock, p50 and p99 over the last ${RANGE_SPECS[range].label}. An expiry counts from the holder's last sign of life; release, disconnect and force-release hand over at once.`}
      testId="chart-by-cause"
      empty={blocked === undefined ? 'Loading…' : hasHandovers ? null : `No handovers to a waiter in the last ${RANGE_SPECS[range].label}`}
    >
      <BarChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" stroke={p.axis} tick={{ fontSize: 11 }} interval={0} label={xTitle(p, 'previous holder ended by (handovers)')} />
        <YAxis
          stroke={p.axis}
          tick={{ fontSize: 11 }}
          width={Y_AXIS_WIDTH}
          domain={axis.domain}
          ticks={axis.ticks}
          tickFormatter={axis.format}
          label={yTitle(p, 'blocked')}
        />
        <Tooltip {...tooltipStyle(p)} formatter={formatMs} cursor={{ fill: p.grid, opacity: 0.4 }} />
        <Legend wrapperStyle={{ fontSize: 12 }} verticalAlign="top" height={20} />
        <Bar dataKey="p50" name="p50" fill={p.p50} isAnimationActive={false} />
        <Bar dataKey="p99" name="p99" fill={p.p99} isAnimationActive={false} />
      </BarChart>
    </ChartFrame>
  );
});
