import { RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { formatClockTime, formatDuration, formatSpan } from '@/lib/dashboard/dashboard-format.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import type { ChartPalette } from './palette.ts';

/** What a time chart's tooltip shows for the row under the crosshair. */
export interface TooltipRow {
  start: number;
  /** Label and value, already formatted. */
  lines: Array<[string, string]>;
  /** The bucket in progress: how much of it has passed (ms). */
  partialMs: number | null;
}

/**
 * The crosshair's tooltip: the bucket's time, each figure as measured (not as plotted: a log
 * axis puts "< 1 µs" on its floor), and for the bucket in progress how much of it has passed.
 * The chart's Tooltip needs `filterNull={false}`: a bucket with no samples has only nulls, and
 * Recharts would otherwise hide the tooltip there (it said nothing over an empty bucket in progress).
 */
export function ChartTooltip({
  active,
  payload,
  palette,
  range,
  row,
}: {
  active?: boolean;
  payload?: ReadonlyArray<{ payload?: unknown }>;
  palette: ChartPalette;
  range: HistoryRange;
  row: (point: unknown) => TooltipRow | null;
}) {
  const point = payload?.[0]?.payload;
  const shown = active && point !== undefined ? row(point) : null;
  if (shown === null) return null;
  return (
    <div
      data-testid="chart-tooltip"
      style={{ background: palette.tooltipBg, border: `1px solid ${palette.tooltipBorder}`, color: palette.tooltipText }}
      className="rounded-md px-2 py-1 text-xs tabular-nums"
    >
      <div className="font-semibold">{formatClockTime(shown.start)}</div>
      {shown.lines.map(([label, value]) => (
        <div key={label}>
          {label} {value}
        </div>
      ))}
      {shown.partialMs !== null && (
        <div className="italic">
          in progress: {formatDuration(shown.partialMs)} of {RANGE_SPECS[range].bucketLabel}
        </div>
      )}
    </div>
  );
}

/** A duration row: p50 and p99 as measured, or "no samples". */
export function durationLines(p50: number | null, p99: number | null): Array<[string, string]> {
  if (p50 === null && p99 === null) return [['', 'no samples']];
  return [
    ['p50', formatSpan(p50)],
    ['p99', formatSpan(p99)],
  ];
}
