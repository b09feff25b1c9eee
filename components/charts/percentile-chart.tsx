import { memo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import { chartWindow, durationTick, hasLatency, type LatencyPoint, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatLatency } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import { CHART_MARGIN, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';
import { timeAxis, timeLabel } from './time-axis.ts';

export function formatMs(value: unknown): string {
  return typeof value === 'number' ? formatLatency(value) : String(value ?? '—');
}

/**
 * p50 and p99 of one duration per bucket over the picked range (queue wait, hold time, the
 * in-daemon handover): lines with a time axis and a duration axis, both titled.
 */
export const PercentileChart = memo(function PercentileChart({
  title,
  description,
  testId,
  yLabel,
  empty,
  points,
  asOf,
  range,
}: {
  title: string;
  description: string;
  testId: string;
  yLabel: string;
  empty: string;
  points: readonly LatencyPoint[];
  asOf: number;
  range: HistoryRange;
}) {
  const p = useChartPalette();
  const { from, to } = chartWindow(asOf, range);
  // A line through one point draws nothing: show dots while there are only a few.
  const withData = points.filter((pt) => pt.p50 !== null).length;
  const dot = withData < 4 ? { r: 3 } : false;
  return (
    <ChartFrame
      title={title}
      description={`${description} Per ${RANGE_SPECS[range].bucketLabel}, last ${RANGE_SPECS[range].label}.`}
      testId={testId}
      empty={hasLatency(points) ? null : empty}
    >
      <LineChart data={[...points]} responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis dataKey="start" {...timeAxis(p, from, to)} />
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={Y_AXIS_WIDTH} tickFormatter={durationTick} label={yTitle(p, yLabel)} />
        <Tooltip {...tooltipStyle(p)} labelFormatter={timeLabel} formatter={formatMs} />
        <Legend wrapperStyle={{ fontSize: 12 }} verticalAlign="top" height={20} />
        <Line type="monotone" dataKey="p50" name="p50" stroke={p.p50} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
        <Line type="monotone" dataKey="p99" name="p99" stroke={p.p99} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
      </LineChart>
    </ChartFrame>
  );
});
