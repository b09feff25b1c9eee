import { memo, useMemo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ReferenceArea, Tooltip, XAxis, YAxis } from 'recharts';
import { type DurationScale, durationAxis, type PlotPoint, plotPoints, valueRange } from '@/lib/dashboard/chart-scale.ts';
import { chartWindow, hasLatency, type LatencyPoint, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatLatency } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import { CHART_MARGIN, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { ChartTooltip, durationLines, type TooltipRow } from './duration-tooltip.tsx';
import { useChartPalette } from './palette.ts';
import { timeAxis } from './time-axis.ts';

export function formatMs(value: unknown): string {
  return typeof value === 'number' ? formatLatency(value) : String(value ?? '—');
}

function tooltipRow(point: unknown): TooltipRow | null {
  const pt = point as PlotPoint;
  return { start: pt.start, lines: durationLines(pt.p50Value, pt.p99Value), partialMs: pt.partialMs };
}

/**
 * p50 and p99 of one duration per bucket over the picked range (queue wait, hold time, the
 * in-daemon handover): straight lines between the buckets' figures (no smoothing humps), a log
 * or linear duration axis with ticks a person reads (chart-scale.ts), the bucket in progress
 * dashed and shaded as "partial", and a crosshair whose tooltip gives the measured figures.
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
  scale,
}: {
  title: string;
  description: string;
  testId: string;
  yLabel: string;
  empty: string;
  points: readonly LatencyPoint[];
  asOf: number;
  range: HistoryRange;
  scale: DurationScale;
}) {
  const p = useChartPalette();
  const { from, to } = chartWindow(asOf, range);
  const { bucketMs } = RANGE_SPECS[range];
  const data = useMemo(() => plotPoints(points, asOf, range, scale), [points, asOf, range, scale]);
  const { minPositive, max } = valueRange(points);
  const axis = durationAxis(scale, minPositive, max);
  // A line through one point draws nothing: show dots while there are only a few.
  const withData = points.filter((pt) => pt.p50 !== null).length;
  const dot = withData < 4 ? { r: 3 } : false;
  const partialDot = { r: 3, fill: p.tooltipBg, strokeWidth: 2 };
  return (
    <ChartFrame
      title={title}
      description={`${description} Per ${RANGE_SPECS[range].bucketLabel}, last ${RANGE_SPECS[range].label}; ${scale === 'log' ? 'log' : 'linear'} scale.`}
      testId={testId}
      empty={hasLatency(points) ? null : empty}
      attributes={{ 'data-scale': scale, 'data-partial-start': to }}
    >
      <LineChart data={data} responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis dataKey="start" {...timeAxis(p, from, to + bucketMs)} />
        <YAxis
          stroke={p.axis}
          tick={{ fontSize: 11 }}
          width={Y_AXIS_WIDTH}
          scale={axis.scale}
          domain={axis.domain}
          ticks={axis.ticks}
          tickFormatter={axis.format}
          allowDataOverflow
          label={yTitle(p, yLabel)}
        />
        <ReferenceArea
          x1={to}
          x2={to + bucketMs}
          fill={p.grid}
          fillOpacity={0.5}
          ifOverflow="hidden"
          label={{ value: 'partial', position: 'insideTop', fontSize: 10, fill: p.axis }}
          className="chart-partial"
        />
        <Tooltip filterNull={false} content={<ChartTooltip palette={p} range={range} row={tooltipRow} />} cursor={{ stroke: p.axis, strokeDasharray: '3 3' }} />
        <Legend wrapperStyle={{ fontSize: 12 }} verticalAlign="top" height={20} />
        <Line type="linear" dataKey="p50" name="p50" stroke={p.p50} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
        <Line type="linear" dataKey="p99" name="p99" stroke={p.p99} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
        <Line
          type="linear"
          dataKey="p50Partial"
          name="p50 (partial)"
          legendType="none"
          stroke={p.p50}
          strokeWidth={2}
          strokeDasharray="4 3"
          dot={partialDot}
          connectNulls
          isAnimationActive={false}
        />
        <Line
          type="linear"
          dataKey="p99Partial"
          name="p99 (partial)"
          legendType="none"
          stroke={p.p99}
          strokeWidth={2}
          strokeDasharray="4 3"
          dot={partialDot}
          connectNulls
          isAnimationActive={false}
        />
      </LineChart>
    </ChartFrame>
  );
});
