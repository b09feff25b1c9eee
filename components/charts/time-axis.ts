// The time axis of the charts over time (grants, the percentile lines, failovers): the picked
// range's window in local clock minutes, with its title, and the tooltip heading to match.
import { timeTicks } from '@/lib/dashboard/dashboard-charts.ts';
import { formatClockMinutes, formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import { xTitle } from './axis-titles.ts';
import type { ChartPalette } from './palette.ts';

/** An XAxis's props for epoch milliseconds from `from` to `to`; the chart adds its own dataKey. */
export function timeAxis(p: ChartPalette, from: number, to: number) {
  return {
    type: 'number' as const,
    scale: 'time' as const,
    domain: [from, to],
    ticks: timeTicks(from, to),
    tickFormatter: formatClockMinutes,
    stroke: p.axis,
    tick: { fontSize: 11 },
    label: xTitle(p, 'time (local)'),
  };
}

/** A tooltip's heading for a point on the time axis. */
export function timeLabel(label: unknown): string {
  return formatClockTime(Number(label));
}
