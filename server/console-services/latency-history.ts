// The charts' memory: grants and handover latencies of the last 15 minutes in 90 buckets of
// 10 seconds (HistoryBucket in api-types.ts). Pure: no timers and no Date.now; callers pass
// wall-clock (epoch) milliseconds, so tests and the daemon share one code path.
//
// Percentiles come from a log-scaled histogram per bucket and cause (the DDSketch idea): bin
// i holds [MIN·γ^(i-1), MIN·γ^i) and reports 2·MIN·γ^i/(γ+1), which is within α of every value
// in the bin. Recording is one Math.log and an array increment (O(1), allocation-free once a
// bucket's arrays exist), because it runs on the engine's hot path.
import type { HandoverCause } from '../../lib/engine/claim.ts';
import { HANDOVER_CAUSES, type CauseLatency, type HistoryBucket, type LatencySummary } from '../../lib/ops-api/api-types.ts';

export const BUCKET_MS = 10_000;
export const BUCKET_COUNT = 90;
export const HISTORY_MS = BUCKET_MS * BUCKET_COUNT;
/** What a reported percentile promises: within 5% of the exact one, for latencies from 1 µs to 60 s. */
export const RELATIVE_ERROR = 0.05;
/** Latencies below this (0 included: a release hands over in the same engine step) report as 0. */
export const MIN_MS = 0.001;
/** Latencies above this report as about this. */
export const MAX_MS = 60_000;

// A little under RELATIVE_ERROR, leaving room for the 4-significant-digit rounding below.
const ALPHA = 0.049;
const GAMMA = (1 + ALPHA) / (1 - ALPHA);
const LOG_GAMMA = Math.log(GAMMA);
/** Bin 0 is "below MIN_MS"; bins 1..TOP cover [MIN_MS, MIN_MS·γ^TOP) ⊇ [MIN_MS, MAX_MS]. */
const TOP = Math.ceil(Math.log(MAX_MS / MIN_MS) / LOG_GAMMA);
const BINS = TOP + 1;
/** The value each bin reports, rounded to 4 significant digits so the JSON stays short. */
const REPORTED = new Float64Array(BINS);
for (let i = 1; i < BINS; i++) REPORTED[i] = Number(((MIN_MS * 2 * GAMMA ** i) / (GAMMA + 1)).toPrecision(4));

/** A bucket as this history keeps it: the in-daemon handover only (the charts' other measures are measure-ring.ts's). */
export type LatencyBucket = Pick<HistoryBucket, 'start' | 'grants' | 'handovers' | 'p50' | 'p99' | 'byCause'>;

const CAUSE_INDEX: Record<HandoverCause, number> = { release: 0, disconnect: 1, expiry: 2, 'force-release': 3 };

function binOf(latencyMs: number): number {
  if (!(latencyMs >= MIN_MS)) return 0; // also NaN: a bad sample must not break the chart
  const i = 1 + Math.floor(Math.log(latencyMs / MIN_MS) / LOG_GAMMA);
  return i > TOP ? TOP : i;
}

/** Nearest-rank percentile (the ⌈q·n⌉-th smallest sample) over summed bin counts. */
function percentile(counts: ArrayLike<number>, total: number, q: number): number | null {
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < BINS; i++) {
    seen += counts[i] ?? 0;
    if (seen >= rank) return REPORTED[i] ?? null;
  }
  return REPORTED[TOP] ?? null;
}

/** One 10-second bucket. Its slot in the ring is reused (and zeroed) when a newer bucket needs it. */
class Slot {
  start = Number.NEGATIVE_INFINITY;
  /** The history's version when this slot last changed. */
  version = 0;
  grants = 0;
  handovers = 0;
  readonly causeCounts = [0, 0, 0, 0];
  /** Per cause; allocated the first time the slot sees that cause, then kept and zeroed on reuse. */
  readonly hists: Array<Uint32Array | null> = [null, null, null, null];

  reset(start: number): void {
    this.start = start;
    this.grants = 0;
    this.handovers = 0;
    for (let c = 0; c < 4; c++) {
      this.causeCounts[c] = 0;
      this.hists[c]?.fill(0);
    }
  }
}

function emptyCause(): CauseLatency {
  return { count: 0, p50: null, p99: null };
}

export class LatencyHistory {
  private readonly slots: Slot[] = Array.from({ length: BUCKET_COUNT }, () => new Slot());
  /** Scratch space for merging histograms when a view is built (not on the hot path). */
  private readonly merged = new Float64Array(BINS);
  private versionCounter = 0;

  /** Bumps on every record: a reader that remembers it can ask for only what changed since. */
  get version(): number {
    return this.versionCounter;
  }

  recordGrant(atMs: number): void {
    const slot = this.slotFor(atMs);
    if (slot === null) return;
    slot.grants++;
    slot.version = ++this.versionCounter;
  }

  recordHandover(atMs: number, cause: HandoverCause, latencyMs: number): void {
    const slot = this.slotFor(atMs);
    if (slot === null) return;
    const c = CAUSE_INDEX[cause];
    const hist = (slot.hists[c] ??= new Uint32Array(BINS));
    const bin = binOf(latencyMs);
    hist[bin] = (hist[bin] ?? 0) + 1;
    slot.causeCounts[c] = (slot.causeCounts[c] ?? 0) + 1;
    slot.handovers++;
    slot.version = ++this.versionCounter;
  }

  /**
   * The 90 buckets of the 15 minutes ending with the bucket that holds `nowMs`, oldest first.
   * Buckets with no data are included (zero counts, null percentiles) so a chart's x axis has
   * no gaps and the array always has the same length.
   */
  buckets(nowMs: number): LatencyBucket[] {
    const current = bucketStart(nowMs);
    const out: LatencyBucket[] = [];
    for (let k = BUCKET_COUNT - 1; k >= 0; k--) out.push(this.view(current - k * BUCKET_MS));
    return out;
  }

  /**
   * Buckets inside the window that changed after `version`, plus the current bucket (even
   * when empty, so a live chart keeps moving through quiet periods), oldest first.
   */
  changedSince(version: number, nowMs: number): LatencyBucket[] {
    const current = bucketStart(nowMs);
    const out: LatencyBucket[] = [];
    for (let k = BUCKET_COUNT - 1; k >= 0; k--) {
      const start = current - k * BUCKET_MS;
      const slot = this.slotAt(start);
      if (start === current || (slot.start === start && slot.version > version)) out.push(this.view(start));
    }
    return out;
  }

  /**
   * p50/p95/p99 handover latency (all causes) over every bucket that overlaps the last
   * `windowMs` (capped at 15 minutes): whole buckets, so it covers up to 10 s more than asked.
   */
  summary(nowMs: number, windowMs: number): LatencySummary {
    const merged = this.merged.fill(0);
    let count = 0;
    for (const slot of this.slotsInWindow(nowMs, windowMs)) count += mergeInto(merged, slot);
    return summarize(merged, count);
  }

  /**
   * p50/p95/p99 per cause over the same whole buckets as `summary`: the histograms are merged,
   * so these are percentiles of all the samples (within the stated error), not a mix of
   * per-bucket figures.
   */
  summaryByCause(nowMs: number, windowMs: number): Record<HandoverCause, LatencySummary> {
    const slots = this.slotsInWindow(nowMs, windowMs);
    const out = {} as Record<HandoverCause, LatencySummary>;
    for (const cause of HANDOVER_CAUSES) {
      const merged = this.merged.fill(0);
      let count = 0;
      for (const slot of slots) count += mergeInto(merged, slot, CAUSE_INDEX[cause]);
      out[cause] = summarize(merged, count);
    }
    return out;
  }

  /** The slots that hold the buckets overlapping the last `windowMs` (capped at 15 minutes), newest first. */
  private slotsInWindow(nowMs: number, windowMs: number): Slot[] {
    const from = nowMs - Math.min(Math.max(windowMs, 0), HISTORY_MS);
    const current = bucketStart(nowMs);
    const slots: Slot[] = [];
    for (let k = 0; k < BUCKET_COUNT; k++) {
      const start = current - k * BUCKET_MS;
      if (start + BUCKET_MS <= from) break;
      const slot = this.slotAt(start);
      if (slot.start === start) slots.push(slot);
    }
    return slots;
  }

  private slotAt(start: number): Slot {
    const i = (((start / BUCKET_MS) % BUCKET_COUNT) + BUCKET_COUNT) % BUCKET_COUNT;
    const slot = this.slots[i];
    if (slot === undefined) throw new RangeError(`no history slot for bucket start ${start}`);
    return slot;
  }

  /** The slot for a record at `atMs`, recycled if it still holds an older bucket; null if the record is older than the slot's data. */
  private slotFor(atMs: number): Slot | null {
    if (!Number.isFinite(atMs)) return null;
    const start = bucketStart(atMs);
    const slot = this.slotAt(start);
    if (slot.start === start) return slot;
    // The slot already holds a newer bucket: this record is more than 15 minutes late.
    if (slot.start > start) return null;
    slot.reset(start);
    return slot;
  }

  private view(start: number): LatencyBucket {
    const slot = this.slotAt(start);
    const byCause = { release: emptyCause(), disconnect: emptyCause(), expiry: emptyCause(), 'force-release': emptyCause() };
    if (slot.start !== start) return { start, grants: 0, handovers: 0, p50: null, p99: null, byCause };
    for (const cause of HANDOVER_CAUSES) {
      const c = CAUSE_INDEX[cause];
      const hist = slot.hists[c];
      const n = slot.causeCounts[c] ?? 0;
      if (hist && n > 0) byCause[cause] = { count: n, p50: percentile(hist, n, 0.5), p99: percentile(hist, n, 0.99) };
    }
    const merged = this.merged.fill(0);
    mergeInto(merged, slot);
    return {
      start,
      grants: slot.grants,
      handovers: slot.handovers,
      p50: percentile(merged, slot.handovers, 0.5),
      p99: percentile(merged, slot.handovers, 0.99),
      byCause,
    };
  }
}

/** Adds the slot's histogram of one cause (all causes when none is given) into `into`; returns how many samples it added. */
function mergeInto(into: Float64Array, slot: Slot, cause?: number): number {
  let added = 0;
  for (let c = 0; c < slot.hists.length; c++) {
    const hist = slot.hists[c];
    if (hist === null || hist === undefined || (cause !== undefined && c !== cause)) continue;
    for (let i = 0; i < BINS; i++) into[i] = (into[i] ?? 0) + (hist[i] ?? 0);
    added += slot.causeCounts[c] ?? 0;
  }
  return added;
}

function summarize(merged: Float64Array, count: number): LatencySummary {
  return { count, p50: percentile(merged, count, 0.5), p95: percentile(merged, count, 0.95), p99: percentile(merged, count, 0.99) };
}

/** The start (epoch ms, a multiple of BUCKET_MS) of the bucket that holds `ms`. */
export function bucketStart(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_MS;
}
