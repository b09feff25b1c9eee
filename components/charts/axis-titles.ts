// Axis titles for the charts: Recharts draws them as SVG text inside the chart's margin, in the
// axis colour. Every duration tick carries its own unit (durationTick), so the title names the
// quantity and the unit family, and the y axis is wide enough for "850 µs" or "1.5 min".
import type { ChartPalette } from './palette.ts';

/** Wide enough for the longest duration tick plus the rotated title. */
export const Y_AXIS_WIDTH = 76;

export function yTitle(p: ChartPalette, text: string) {
  return { value: text, angle: -90, position: 'insideLeft' as const, offset: 0, style: { fill: p.axis, fontSize: 11, textAnchor: 'middle' as const } };
}

export function xTitle(p: ChartPalette, text: string) {
  return { value: text, position: 'insideBottom' as const, offset: -2, style: { fill: p.axis, fontSize: 11 } };
}

/** Room under the x ticks for the x title. */
export const CHART_MARGIN = { top: 8, right: 12, bottom: 14, left: 4 };
