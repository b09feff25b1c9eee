// Chart series derived from the history buckets and the cluster's failovers, for one time range:
// 5 minutes (the event stream's 10 s buckets), 1 hour (10 s buckets) and 24 hours (5 min buckets,
// both fetched from GET /api/v1/stats/history). The server sends per-bucket percentiles; merging
// percentiles exactly is impossible without the samples, so the by-cause bars use the range's
// merged figures the server computes from its histograms.
import {
  HANDOVER_CAUSES,
  type CauseLatency,
  type FailoverView,
  type HandoverCause,
  type HistoryBucket,
  type HistoryRange,
  type LatencySummary,
} from '../ops-api/api-types.ts';

export interface RangeSpec {
  spanMs: number;
  bucketMs: number;
  /** For people: "5 min", "1 h", "24 h". */
  label: string;
  /** "10 s" or "5 min": what one point covers. */
  bucketLabel: string;
}

export const RANGE_SPECS: Record<HistoryRange, RangeSpec> = {
  '5m': { spanMs: 5 * 60_000, bucketMs: 10_000, label: '5 min', bucketLabel: '10 s' },
  '1h': { spanMs: 3_600_000, bucketMs: 10_000, label: '1 h', bucketLabel: '10 s' },
  '24h': { spanMs: 86_400_000, bucketMs: 300_000, label: '24 h', bucketLabel: '5 min' },
};

export interface LatencyPoint {
  start: number;
  p50: number | null;
  p99: number | null;
}

export interface QueueWaitPoint extends LatencyPoint {
  /** Percent of the bucket's grants that queued; null without grants. */
  waitedPct: number | null;
}

export interface GrantsPoint {
  start: number;
  perSecond: number;
}

export interface CauseLatencyPoint {
  cause: HandoverCause;
  count: number;
  p50: number | null;
  p99: number | null;
}

export interface FailoverPoint extends FailoverView {
  label: string;
}

/** The chart window [from, to] of `range` ending at the bucket that `asOf` falls in. */
export function chartWindow(asOf: number, range: HistoryRange = '5m'): { from: number; to: number } {
  const { spanMs, bucketMs } = RANGE_SPECS[range];
  const to = Math.floor(asOf / bucketMs) * bucketMs;
  return { from: to - spanMs + bucketMs, to };
}

function inWindow(history: readonly HistoryBucket[], asOf: number, range: HistoryRange): HistoryBucket[] {
  const { from, to } = chartWindow(asOf, range);
  return history.filter((b) => b.start >= from && b.start <= to);
}

/** In-daemon handover p50 and p99 per bucket; buckets without handovers have nulls (gaps the line bridges). */
export function latencySeries(history: readonly HistoryBucket[], asOf: number, range: HistoryRange = '5m'): LatencyPoint[] {
  return inWindow(history, asOf, range).map((b) => ({ start: b.start, p50: b.p50, p99: b.p99 }));
}

/** Queue wait of the grants that queued, p50 and p99 per bucket, and the share of grants that queued. */
export function queueWaitSeries(history: readonly HistoryBucket[], asOf: number, range: HistoryRange = '5m'): QueueWaitPoint[] {
  return inWindow(history, asOf, range).map((b) => ({
    start: b.start,
    p50: b.queueWait.waitedP50,
    p99: b.queueWait.waitedP99,
    waitedPct: b.queueWait.count === 0 ? null : Math.round((1_000 * b.queueWait.waited) / b.queueWait.count) / 10,
  }));
}

/** Hold time p50 and p99 of the holders that ended in each bucket. */
export function holdSeries(history: readonly HistoryBucket[], asOf: number, range: HistoryRange = '5m'): LatencyPoint[] {
  return inWindow(history, asOf, range).map((b) => ({ start: b.start, p50: b.hold.p50, p99: b.hold.p99 }));
}

/** Whether any bucket in the window has a figure (the chart has something to draw). */
export function hasLatency(points: readonly LatencyPoint[]): boolean {
  return points.some((p) => p.p50 !== null || p.p99 !== null);
}

/** Grants per second for every bucket of the window; a bucket the server never sent had none. */
export function grantsSeries(history: readonly HistoryBucket[], asOf: number, range: HistoryRange = '5m'): GrantsPoint[] {
  const { bucketMs } = RANGE_SPECS[range];
  const { from, to } = chartWindow(asOf, range);
  const grants = new Map<number, number>();
  for (const b of history) grants.set(b.start, b.grants);
  const out: GrantsPoint[] = [];
  for (let start = from; start <= to; start += bucketMs) out.push({ start, perSecond: (grants.get(start) ?? 0) / (bucketMs / 1_000) });
  return out;
}

/** One bar group per cause, in a fixed order, from figures the server merged over a range. */
export function causeLatency(byCause: Record<HandoverCause, LatencySummary | CauseLatency>): CauseLatencyPoint[] {
  return HANDOVER_CAUSES.map((cause) => ({ cause, count: byCause[cause].count, p50: byCause[cause].p50, p99: byCause[cause].p99 }));
}

/** Failovers oldest first, each with a "from → to" label. */
export function failoverPoints(failovers: readonly FailoverView[]): FailoverPoint[] {
  return [...failovers].sort((a, b) => a.at - b.at).map((f) => ({ ...f, label: `${f.from ?? '(none)'} → ${f.to}` }));
}

/** The failover chart's time axis: the chart window, widened to include older failovers. */
export function failoverDomain(failovers: readonly FailoverView[], asOf: number, range: HistoryRange = '5m'): [number, number] {
  const { from, to } = chartWindow(asOf, range);
  let lo = from;
  for (const f of failovers) if (f.at < lo) lo = f.at;
  return [lo, Math.max(to + RANGE_SPECS[range].bucketMs, ...failovers.map((f) => f.at))];
}

const TICK_STEPS_MS = [60_000, 120_000, 180_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000];

/** Time-axis ticks on whole minutes (whole steps), at most `maxTicks` of them, inside [from, to]. */
export function timeTicks(from: number, to: number, maxTicks = 6): number[] {
  const span = Math.max(0, to - from);
  const step = TICK_STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  return ticks;
}

/**
 * A duration axis tick that fits its axis: "0", "850 µs", "12 ms", "1.5 s", "4 min", "2 h". The
 * unit is in the tick, so a chart with waits of seconds does not print "12,000 ms" and get clipped.
 */
export function durationTick(ms: number): string {
  if (!(ms > 0)) return '0';
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1_000) return `${Number(ms.toPrecision(2))} ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toPrecision(2))} s`;
  if (ms < 3_600_000) return `${Number((ms / 60_000).toPrecision(2))} min`;
  return `${Number((ms / 3_600_000).toPrecision(2))} h`;
}

/** A grants-chart row: finished buckets in `perSecond`, the bucket in progress in `partial`. */
export interface GrantsPlotPoint {
  start: number;
  /** Drawn as the finished steps (the row of the bucket in progress closes the last one). */
  perSecond: number | null;
  /** The bucket in progress, over the part of it that has passed, drawn apart from [its start, its end]. */
  partial: number | null;
  /** What the tooltip says for this row; null: nothing (the closing row). */
  value: number | null;
  /** The bucket in progress: how much of it has passed (ms). */
  partialMs: number | null;
}

/**
 * Grants per second as the chart draws it, one bucket past the window's last start: the bucket
 * that holds `asOf` is still being filled, so its rate is over the part that has passed (at least
 * a second), drawn apart, instead of a drop to a tenth of the rate 1 s into a 10 s bucket.
 */
export function grantsPlot(history: readonly HistoryBucket[], asOf: number, range: HistoryRange = '5m'): GrantsPlotPoint[] {
  const { bucketMs } = RANGE_SPECS[range];
  const { to } = chartWindow(asOf, range);
  const rows = grantsSeries(history, asOf, range);
  const out: GrantsPlotPoint[] = [];
  let previous: number | null = null;
  for (const row of rows) {
    if (row.start < to) {
      out.push({ start: row.start, perSecond: row.perSecond, partial: null, value: row.perSecond, partialMs: null });
      previous = row.perSecond;
      continue;
    }
    const passed = Math.min(Math.max(asOf - to, 1_000), bucketMs);
    const rate = (row.perSecond * (bucketMs / 1_000)) / (passed / 1_000);
    out.push({ start: to, perSecond: previous, partial: rate, value: rate, partialMs: Math.min(asOf - to, bucketMs) });
    out.push({ start: to + bucketMs, perSecond: null, partial: rate, value: null, partialMs: null });
  }
  return out;
}
