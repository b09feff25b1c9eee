// How the duration charts draw their values (issue 30, readability): a log y axis by default, so
// one 28 s wait does not flatten an hour of 300 ms waits, or a linear one; ticks a person reads
// ("1 ms, 10 ms, 100 ms, 1 s, 10 s, 1 min" on a log axis, "0, 30 s, 60 s, 90 s" or
// "0, 2 min, 4 min" on a linear one, never "1.7 min"); and the bucket still being filled kept
// apart from the finished ones, so it does not read as a drop. Pure: the chart components draw
// what these return.
import { HISTORY_RANGES, type HistoryRange } from '../ops-api/api-types.ts';
import { chartWindow, durationTick, type LatencyPoint, RANGE_SPECS } from './dashboard-charts.ts';

export type DurationScale = 'log' | 'linear';
export const DURATION_SCALES: readonly DurationScale[] = ['log', 'linear'];

/** The smallest value a log axis shows: a figure under 1 µs (a same-step handover reports 0) sits on it. */
export const LOG_FLOOR_MS = 0.001;

/** Log-axis ticks: one per decade, in the units people say (1 min and 10 min, not 100 s). */
const LOG_TICKS = [0.001, 0.01, 0.1, 1, 10, 100, 1_000, 10_000, 60_000, 600_000, 3_600_000, 36_000_000, 360_000_000];

const S = 1_000;
const MIN = 60_000;
const H = 3_600_000;
/** Linear-axis steps: whole numbers in the unit the step is written in. */
const LINEAR_STEPS = [
  0.001,
  0.002,
  0.005,
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  S,
  2 * S,
  5 * S,
  10 * S,
  15 * S,
  30 * S,
  MIN,
  2 * MIN,
  5 * MIN,
  10 * MIN,
  15 * MIN,
  30 * MIN,
  H,
  2 * H,
  3 * H,
  6 * H,
  12 * H,
  24 * H,
];

export interface DurationAxis {
  scale: DurationScale;
  domain: [number, number];
  ticks: number[];
  format: (ms: number) => string;
}

/** The y axis for values whose largest is `max` and smallest above 0 is `minPositive` (null: no data). */
export function durationAxis(scale: DurationScale, minPositive: number | null, max: number | null): DurationAxis {
  if (scale === 'log') {
    const lo = Math.max(LOG_FLOOR_MS, minPositive ?? LOG_FLOOR_MS);
    const hi = Math.max(lo, max ?? 1);
    const bottom = [...LOG_TICKS].reverse().find((t) => t <= lo) ?? LOG_FLOOR_MS;
    const top = LOG_TICKS.find((t) => t >= hi) ?? (LOG_TICKS.at(-1) as number);
    const ticks = LOG_TICKS.filter((t) => t >= bottom && t <= (top === bottom ? bottom * 10 : top));
    const domainTop = ticks.at(-1) ?? top;
    return { scale, domain: [bottom, domainTop], ticks: thin(ticks, 7), format: durationTick };
  }
  const top = max === null || !(max > 0) ? 1 : max;
  const step = LINEAR_STEPS.find((s) => top / s <= 5) ?? Math.ceil(top / 5 / (24 * H)) * 24 * H;
  const ticks: number[] = [];
  for (let k = 0; k * step < top + step && ticks.length < 7; k++) ticks.push(k * step);
  const last = ticks.at(-1) ?? step;
  return { scale, domain: [0, last], ticks, format: (ms) => stepTick(ms, step, last) };
}

/** Every other tick while there are more than `most`: a log axis over 1 µs to 10 h keeps its ends. */
function thin(ticks: number[], most: number): number[] {
  if (ticks.length <= most) return ticks;
  const last = ticks.length - 1;
  return ticks.filter((_, i) => (last - i) % 2 === 0);
}

const UNITS: ReadonlyArray<[number, string]> = [
  [0.001, 'µs'],
  [1, 'ms'],
  [S, 's'],
  [MIN, 'min'],
  [H, 'h'],
];

/**
 * A linear tick in the unit of its step, so every tick of an axis is a whole number of it: "90 s",
 * not "1.5 min"; but a unit up when the axis would reach 1,000 of it ("0.2 ms … 1 ms", not "1000 µs").
 */
export function stepTick(ms: number, step: number, top = step): string {
  if (ms === 0) return '0';
  let u = UNITS.findLastIndex(([unit]) => step >= unit);
  if (u < 0) u = 0;
  const next = UNITS[u + 1];
  if (next !== undefined && top >= next[0] && top / (UNITS[u]?.[0] ?? 1) >= 1_000) u++;
  const [unit, name] = UNITS[u] ?? [1, 'ms'];
  return `${Number((ms / unit).toPrecision(6))} ${name}`;
}

/** A point as the duration charts plot it: finished buckets in p50/p99, the one in progress in its own keys. */
export interface PlotPoint {
  start: number;
  /** Plotted (on a log axis, a figure under 1 µs sits on the floor); null: nothing in this bucket. */
  p50: number | null;
  p99: number | null;
  /** The last finished point and the one in progress, joined by a dashed segment. */
  p50Partial: number | null;
  p99Partial: number | null;
  /** The figures as measured, for the tooltip. */
  p50Value: number | null;
  p99Value: number | null;
  /** This bucket is still being filled: how much of it has passed (ms). */
  partialMs: number | null;
}

/**
 * The points of a duration chart: the bucket that holds `asOf` is in progress, so it is drawn
 * apart (its own keys, a dashed segment from the last finished point) and says how much of it
 * has passed.
 */
export function plotPoints(points: readonly LatencyPoint[], asOf: number, range: HistoryRange, scale: DurationScale): PlotPoint[] {
  const { to } = chartWindow(asOf, range);
  const plot = (v: number | null) => (v === null ? null : scale === 'log' ? Math.max(v, LOG_FLOOR_MS) : v);
  const out: PlotPoint[] = points.map((pt) => {
    const partial = pt.start >= to;
    return {
      start: pt.start,
      p50: partial ? null : plot(pt.p50),
      p99: partial ? null : plot(pt.p99),
      p50Partial: partial ? plot(pt.p50) : null,
      p99Partial: partial ? plot(pt.p99) : null,
      p50Value: pt.p50,
      p99Value: pt.p99,
      partialMs: partial ? Math.min(asOf - pt.start, RANGE_SPECS[range].bucketMs) : null,
    };
  });
  // The dashed segment starts at the last finished point that has a figure.
  const last = out.at(-1);
  if (last !== undefined && last.partialMs !== null) {
    for (let i = out.length - 2; i >= 0; i--) {
      const prev = out[i];
      if (prev === undefined || prev.p50 === null) continue;
      prev.p50Partial = prev.p50;
      prev.p99Partial = prev.p99;
      break;
    }
  }
  return out;
}

/** The smallest figure above 0 and the largest of the points (null when there are none). */
export function valueRange(points: readonly LatencyPoint[]): { minPositive: number | null; max: number | null } {
  let minPositive: number | null = null;
  let max: number | null = null;
  for (const pt of points) {
    for (const v of [pt.p50, pt.p99]) {
      if (v === null) continue;
      if (max === null || v > max) max = v;
      if (v > 0 && (minPositive === null || v < minPositive)) minPositive = v;
    }
  }
  return { minPositive, max };
}

/** The `range` URL parameter: one of the ranges, else the default 5 minutes. */
export function parseRangeParam(raw: string | null): HistoryRange {
  return (HISTORY_RANGES as readonly string[]).includes(raw ?? '') ? (raw as HistoryRange) : '5m';
}

/** The `range` parameter to write: none for the default, so the plain page keeps the plain URL. */
export function rangeParam(range: HistoryRange): string | null {
  return range === '5m' ? null : range;
}
