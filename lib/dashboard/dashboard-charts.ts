// Chart series derived from the 10-second history buckets and the cluster's failovers. The
// server sends per-bucket percentiles; merging percentiles exactly is impossible without the
// samples, so the by-cause chart uses two honest summaries (see causeLatency).
import { HANDOVER_CAUSES, type FailoverView, type HandoverCause, type HistoryBucket, type LatencySummary } from '../ops-api/api-types.ts';
import { BUCKET_MS, HISTORY_WINDOW_MS } from './dashboard-state.ts';

export interface LatencyPoint {
  start: number;
  p50: number | null;
  p99: number | null;
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

/** The chart window [from, to] ending at the newest bucket that `asOf` falls in. */
export function chartWindow(asOf: number): { from: number; to: number } {
  const to = Math.floor(asOf / BUCKET_MS) * BUCKET_MS;
  return { from: to - HISTORY_WINDOW_MS + BUCKET_MS, to };
}

function inWindow(history: readonly HistoryBucket[], asOf: number): HistoryBucket[] {
  const { from, to } = chartWindow(asOf);
  return history.filter((b) => b.start >= from && b.start <= to);
}

/** p50 and p99 per bucket; buckets without handovers have nulls (gaps the line bridges). */
export function latencySeries(history: readonly HistoryBucket[], asOf: number): LatencyPoint[] {
  return inWindow(history, asOf).map((b) => ({ start: b.start, p50: b.p50, p99: b.p99 }));
}

/** Whether any bucket in the window had a handover (the latency chart has something to draw). */
export function hasLatency(points: readonly LatencyPoint[]): boolean {
  return points.some((p) => p.p50 !== null || p.p99 !== null);
}

/** Grants per second for every bucket of the window; a bucket the server never sent had none. */
export function grantsSeries(history: readonly HistoryBucket[], asOf: number): GrantsPoint[] {
  const { from, to } = chartWindow(asOf);
  const grants = new Map<number, number>();
  for (const b of history) grants.set(b.start, b.grants);
  const out: GrantsPoint[] = [];
  for (let start = from; start <= to; start += BUCKET_MS) out.push({ start, perSecond: (grants.get(start) ?? 0) / (BUCKET_MS / 1_000) });
  return out;
}

/** One bar group per cause, in a fixed order, from the server's percentiles over the last 15 minutes. */
export function causeLatency(byCause: Record<HandoverCause, LatencySummary>): CauseLatencyPoint[] {
  return HANDOVER_CAUSES.map((cause) => ({ cause, count: byCause[cause].count, p50: byCause[cause].p50, p99: byCause[cause].p99 }));
}

/** Failovers oldest first, each with a "from → to" label. */
export function failoverPoints(failovers: readonly FailoverView[]): FailoverPoint[] {
  return [...failovers].sort((a, b) => a.at - b.at).map((f) => ({ ...f, label: `${f.from ?? '(none)'} → ${f.to}` }));
}

/** The failover chart's time axis: the chart window, widened to include older failovers. */
export function failoverDomain(failovers: readonly FailoverView[], asOf: number): [number, number] {
  const { from, to } = chartWindow(asOf);
  let lo = from;
  for (const f of failovers) if (f.at < lo) lo = f.at;
  return [lo, Math.max(to + BUCKET_MS, ...failovers.map((f) => f.at))];
}

const TICK_STEPS_MS = [60_000, 120_000, 180_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];

/** Time-axis ticks on whole minutes (whole steps), at most `maxTicks` of them, inside [from, to]. */
export function timeTicks(from: number, to: number, maxTicks = 6): number[] {
  const span = Math.max(0, to - from);
  const step = TICK_STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  return ticks;
}
