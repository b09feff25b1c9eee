import { memo, useMemo } from 'react';
import { Area, AreaChart, CartesianGrid, ReferenceArea, Tooltip, XAxis, YAxis } from 'recharts';
import { chartWindow, type GrantsPlotPoint, grantsPlot, RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatOneDecimal } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import type { HistoryView } from '../data/queries.ts';
import { CHART_MARGIN, Y_AXIS_WIDTH, yTitle } from './axis-titles.ts';
import { ChartFrame } from './chart-frame.tsx';
import { ChartTooltip, type TooltipRow } from './duration-tooltip.tsx';
import { useChartPalette } from './palette.ts';
import { timeAxis } from './time-axis.ts';

function tooltipRow(point: unknown): TooltipRow | null {
  const pt = point as GrantsPlotPoint;
  return pt.value === null ? null : { start: pt.start, lines: [['grants', `${formatOneDecimal(pt.value)}/s`]], partialMs: pt.partialMs };
}

/**
 * Grants per second, averaged over each bucket of the picked range, as steps; the bucket in
 * progress is averaged over the part that has passed and drawn apart, shaded as "partial", so
 * it does not read as a drop.
 */
export const GrantsChart = memo(function GrantsChart({ view, range }: { view: HistoryView; range: HistoryRange }) {
  const p = useChartPalette();
  const points = useMemo(() => grantsPlot(view.history, view.asOf, range), [view, range]);
  const { from, to } = chartWindow(view.asOf, range);
  const { bucketLabel, label, bucketMs } = RANGE_SPECS[range];
  return (
    <ChartFrame
      title="Grants per second"
      description={`Grants in each ${bucketLabel} bucket ÷ its seconds, last ${label}; the bucket in progress over the part that has passed.`}
      testId="chart-grants"
      attributes={{ 'data-partial-start': to }}
    >
      <AreaChart data={points} responsive style={{ width: '100%', height: '100%' }} margin={CHART_MARGIN}>
        <CartesianGrid stroke={p.grid} strokeDasharray="3 3" />
        <XAxis dataKey="start" {...timeAxis(p, from, to + bucketMs)} />
        <YAxis stroke={p.axis} tick={{ fontSize: 11 }} width={Y_AXIS_WIDTH} allowDecimals label={yTitle(p, 'grants/s')} />
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
        <Area type="stepAfter" dataKey="perSecond" name="grants" stroke={p.grants} fill={p.grants} fillOpacity={0.25} isAnimationActive={false} />
        <Area
          type="stepAfter"
          dataKey="partial"
          name="grants (partial)"
          stroke={p.grants}
          strokeDasharray="4 3"
          fill={p.grants}
          fillOpacity={0.1}
          isAnimationActive={false}
        />
      </AreaChart>
    </ChartFrame>
  );
});
