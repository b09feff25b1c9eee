import { memo } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { causeLatency } from '@/lib/dashboard/dashboard-charts.ts';
import { formatMsTick } from '@/lib/dashboard/dashboard-format.ts';
import type { HandoverCause, LatencySummary } from '@/lib/ops-api/api-types.ts';
import { ChartFrame } from './chart-frame.tsx';
import { formatMs } from './latency-chart.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';

/** Latency by handover cause over the last 15 minutes: the server merges the histograms. */
export const CauseChart = memo(function CauseChart({ byCause }: { byCause: Record<HandoverCause, LatencySummary> }) {
  const p = useChartPalette();
  const points = causeLatency(byCause);
  const hasHandovers = points.some((c) => c.count > 0);
  return (
    <ChartFrame
      title="Latency by cause"
      description="p50 and p99 per cause over the last 15 minutes (release, disconnect and force-release hand over within the same step)."
      testId="chart-by-cause"
      empty={hasHandovers ? null : 'No handovers in the last 15 minutes'}
    >
      <BarChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="cause" stroke={p.axis} tick={{ fontSize: 11 }} interval={0} />
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={60} tickFormatter={formatMsTick} />
        <Tooltip {...tooltipStyle(p)} formatter={formatMs} cursor={{ fill: p.grid, opacity: 0.4 }} />
        <Legend wrapperStyle={{ fontSize: 12 }} />
        <Bar dataKey="p50" name="p50" fill={p.p50} isAnimationActive={false} />
        <Bar dataKey="p99" name="p99" fill={p.p99} isAnimationActive={false} />
      </BarChart>
    </ChartFrame>
  );
});
