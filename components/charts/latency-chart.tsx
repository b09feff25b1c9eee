import { memo } from 'react';
import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import { chartWindow, hasLatency, latencySeries, timeTicks } from '@/lib/dashboard/dashboard-charts.ts';
import { formatClockMinutes, formatClockTime, formatLatency, formatMsTick } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryView } from '../data/queries.ts';
import { ChartFrame } from './chart-frame.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';

export function formatMs(value: unknown): string {
  return typeof value === 'number' ? formatLatency(value) : String(value ?? '—');
}

/** Handover latency p50 and p99 per 10 s bucket over the last 15 minutes. */
export const LatencyChart = memo(function LatencyChart({ view }: { view: HistoryView }) {
  const p = useChartPalette();
  const points = latencySeries(view.history, view.asOf);
  const { from, to } = chartWindow(view.asOf);
  // A line through one point draws nothing: show dots while there are only a few.
  const withData = points.filter((pt) => pt.p50 !== null).length;
  const dot = withData < 4 ? { r: 3 } : false;
  return (
    <ChartFrame
      title="Handover latency"
      description="p50 and p99 per 10 s bucket, last 15 minutes."
      testId="chart-latency"
      empty={hasLatency(points) ? null : 'No handovers in the last 15 minutes'}
    >
      <LineChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis
          dataKey="start"
          type="number"
          scale="time"
          domain={[from, to]}
          ticks={timeTicks(from, to)}
          tickFormatter={formatClockMinutes}
          stroke={p.axis}
          tick={{ fontSize: 11 }}
        />
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={60} tickFormatter={formatMsTick} />
        <Tooltip {...tooltipStyle(p)} labelFormatter={(label) => formatClockTime(Number(label))} formatter={formatMs} />
        <Legend wrapperStyle={{ fontSize: 12 }} />
        <Line type="monotone" dataKey="p50" name="p50" stroke={p.p50} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
        <Line type="monotone" dataKey="p99" name="p99" stroke={p.p99} strokeWidth={2} dot={dot} connectNulls isAnimationActive={false} />
      </LineChart>
    </ChartFrame>
  );
});
