import { memo } from 'react';
import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { chartWindow, grantsSeries, timeTicks } from '@/lib/dashboard/dashboard-charts.ts';
import { formatClockMinutes, formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryView } from '../data/queries.ts';
import { ChartFrame } from './chart-frame.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';

function perSecond(value: unknown): string {
  return typeof value === 'number' ? `${value.toLocaleString('en-US', { maximumFractionDigits: 1 })}/s` : String(value ?? '—');
}

/** Grants per second, averaged over each 10 s bucket. */
export const GrantsChart = memo(function GrantsChart({ view }: { view: HistoryView }) {
  const p = useChartPalette();
  const points = grantsSeries(view.history, view.asOf);
  const { from, to } = chartWindow(view.asOf);
  return (
    <ChartFrame title="Grants per second" description="Grants in each 10 s bucket ÷ 10, last 15 minutes." testId="chart-grants">
      <AreaChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
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
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={56} allowDecimals />
        <Tooltip {...tooltipStyle(p)} labelFormatter={(label) => formatClockTime(Number(label))} formatter={perSecond} />
        <Area type="stepAfter" dataKey="perSecond" name="grants" stroke={p.grants} fill={p.grants} fillOpacity={0.25} isAnimationActive={false} />
      </AreaChart>
    </ChartFrame>
  );
});
