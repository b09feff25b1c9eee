import { memo } from 'react';
import { Area, AreaChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { chartWindow, grantsSeries, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatOneDecimal } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import type { HistoryView } from '../data/queries.ts';
import { CHART_MARGIN, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { tooltipStyle, useChartPalette } from './palette.ts';
import { timeAxis, timeLabel } from './time-axis.ts';

function perSecond(value: unknown): string {
  return typeof value === 'number' ? `${formatOneDecimal(value)}/s` : String(value ?? '—');
}

/** Grants per second, averaged over each bucket of the picked range. */
export const GrantsChart = memo(function GrantsChart({ view, range }: { view: HistoryView; range: HistoryRange }) {
  const p = useChartPalette();
  const points = grantsSeries(view.history, view.asOf, range);
  const { from, to } = chartWindow(view.asOf, range);
  const { bucketLabel, label } = RANGE_SPECS[range];
  return (
    <ChartFrame title="Grants per second" description={`Grants in each ${bucketLabel} bucket ÷ its seconds, last ${label}.`} testId="chart-grants">
      <AreaChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis dataKey="start" {...timeAxis(p, from, to)} />
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={Y_AXIS_WIDTH} allowDecimals label={yTitle(p, 'grants/s')} />
        <Tooltip {...tooltipStyle(p)} labelFormatter={timeLabel} formatter={perSecond} />
        <Area type="stepAfter" dataKey="perSecond" name="grants" stroke={p.grants} fill={p.grants} fillOpacity={0.25} isAnimationActive={false} />
      </AreaChart>
    </ChartFrame>
  );
});
