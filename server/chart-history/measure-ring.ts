// A ring of time buckets, each a small set of log-scaled histograms (log-histogram.ts): grants,
// queue wait, hold time, the in-daemon handover by cause and the blocked time of an expiry. The
// charts' history is two of these: 360 buckets of 10 s (the last hour) and 288 of 5 minutes (the
// last 24 hours). Records go to the fine ring only; a fine bucket is rolled up into the coarse
// ring when its slot is taken for a newer bucket, and a read of the coarse ring adds the fine
// buckets not rolled up yet (`rollUpInto`), so the event stream pays for one ring, not two.
// The memory is fixed: the slots are made up front and a slot's histograms, once made, are
// zeroed and reused when the slot comes round again. Pure: callers pass wall-clock (epoch) ms.
import {
  HANDOVER_CAUSES,
  type CauseLatency,
  type HandoverCause,
  type HistoryBucket,
  type LatencySummary,
  type QueueWaitFigures,
} from '../../lib/ops-api/api-types.ts';
import { BINS, addInto, newHistogram, percentile } from './log-histogram.ts';

/** Histogram slots of a bucket: the four handover causes (in-daemon), then these. */
const WAIT = 4;
const HOLD = 5;
const BLOCKED_EXPIRY = 6;
export const MEASURES = 7;
export const CAUSE_INDEX: Record<HandoverCause, number> = { release: 0, disconnect: 1, expiry: 2, 'force-release': 3 };

class Slot {
  start = Number.NEGATIVE_INFINITY;
  version = 0;
  grants = 0;
  /** Samples per measure. */
  readonly counts = new Float64Array(MEASURES);
  /** Made the first time the slot sees the measure, then kept: at most MEASURES per slot. */
  readonly hists: Array<Uint32Array | null> = new Array<Uint32Array | null>(MEASURES).fill(null);

  reset(start: number): void {
    this.start = start;
    this.grants = 0;
    this.counts.fill(0);
    for (const h of this.hists) h?.fill(0);
  }

  /** Adds another slot's samples into this one. */
  absorb(other: Slot): void {
    this.grants += other.grants;
    for (let m = 0; m < MEASURES; m++) {
      const h = other.hists[m];
      const n = other.counts[m] ?? 0;
      if (h === null || h === undefined || n === 0) continue;
      addInto((this.hists[m] ??= newHistogram()), h);
      this.counts[m] = (this.counts[m] ?? 0) + n;
    }
  }
}

/** Percentiles and count of one measure over merged counts. */
function figures(merged: ArrayLike<number>, count: number): CauseLatency {
  return count === 0 ? { count: 0, p50: null, p99: null } : { count, p50: percentile(merged, 0.5), p99: percentile(merged, 0.99) };
}

/** p50/p95/p99 of `count` samples in merged counts; nulls when there are none. */
function latencySummary(merged: ArrayLike<number>, count: number): LatencySummary {
  if (count === 0) return { count: 0, p50: null, p95: null, p99: null };
  return { count, p50: percentile(merged, 0.5), p95: percentile(merged, 0.95), p99: percentile(merged, 0.99) };
}

function waitFigures(merged: ArrayLike<number>, count: number): QueueWaitFigures {
  const waited = count - (merged[0] ?? 0);
  return {
    count,
    p50: count === 0 ? null : percentile(merged, 0.5),
    p99: count === 0 ? null : percentile(merged, 0.99),
    waited,
    waitedP50: waited === 0 ? null : percentile(merged, 0.5, 1),
    waitedP99: waited === 0 ? null : percentile(merged, 0.99, 1),
  };
}

/** One bucket as the data dir keeps it (history-file.ts): its counts and histograms (BINS long). */
export interface SavedBucket {
  start: number;
  grants: number;
  /** Samples per measure (MEASURES long). */
  counts: readonly number[];
  hists: ReadonlyArray<Uint32Array | null>;
}

export interface RangeFigures {
  grants: number;
  queueWait: QueueWaitFigures;
  hold: CauseLatency;
  blocked: Record<HandoverCause, CauseLatency>;
  handover: Record<HandoverCause, CauseLatency>;
}

export class MeasureRing {
  private readonly slots: Slot[];
  /** Scratch for merging histograms when a view is built (reads only, never the record path). */
  private readonly merged: Float64Array[] = Array.from({ length: MEASURES }, () => new Float64Array(BINS));
  private versionCounter = 0;
  /** The coarser ring this one's buckets are rolled up into (fine → coarse). */
  private rollup: MeasureRing | null = null;
  /** The finer ring whose buckets not rolled up yet are part of this one's reads (coarse ← fine). */
  private pending: MeasureRing | null = null;
  /** The slot records went to last and its bucket's span: almost every record lands there again. */
  private hotSlot: Slot | null = null;
  private hotFrom = Number.POSITIVE_INFINITY;
  private hotTo = Number.NEGATIVE_INFINITY;
  /** Scratch for handoverSummary (reads only). */
  private readonly summaryScratch = new Float64Array(BINS);
  /** A read's bucket: this ring's slot plus the pending fine slots in it. */
  private readonly gatheredSlot = new Slot();

  constructor(
    readonly bucketMs: number,
    readonly bucketCount: number,
  ) {
    this.slots = Array.from({ length: bucketCount }, () => new Slot());
  }

  /** Rolls this ring's buckets up into `coarse` (whose bucket length must be a multiple of this one's). */
  rollUpInto(coarse: MeasureRing): void {
    this.rollup = coarse;
    coarse.pending = this;
  }

  /** Bumps on every record. */
  get version(): number {
    return this.versionCounter;
  }

  /** Histograms made so far (the memory figure: each is BINS × 4 bytes); never above bucketCount × 7. */
  get histogramCount(): number {
    let n = 0;
    for (const slot of this.slots) for (const h of slot.hists) if (h !== null) n++;
    return n;
  }

  bucketStart(ms: number): number {
    return Math.floor(ms / this.bucketMs) * this.bucketMs;
  }

  /** A grant at `atMs` whose queue wait fell in `waitBin`. */
  recordGrant(atMs: number, waitBin: number): void {
    const slot = this.slotFor(atMs);
    if (slot === null) return;
    slot.grants++;
    this.add(slot, WAIT, waitBin);
  }

  /** A handover to a waiter, in-daemon latency in `bin`. */
  recordHandover(atMs: number, cause: HandoverCause, bin: number): void {
    const slot = this.slotFor(atMs);
    if (slot !== null) this.add(slot, CAUSE_INDEX[cause], bin);
  }

  /** What an expiry cost the waiter it handed over to (see HistoryBucket.blocked). */
  recordBlockedExpiry(atMs: number, bin: number): void {
    const slot = this.slotFor(atMs);
    if (slot !== null) this.add(slot, BLOCKED_EXPIRY, bin);
  }

  /** A holder that ended at `atMs`, held for a time in `bin`. */
  recordHold(atMs: number, bin: number): void {
    const slot = this.slotFor(atMs);
    if (slot !== null) this.add(slot, HOLD, bin);
  }

  /** The last `n` buckets (at most bucketCount) up to the one holding `nowMs`, oldest first, empty ones included. */
  buckets(nowMs: number, n = this.bucketCount): HistoryBucket[] {
    const current = this.bucketStart(nowMs);
    const out: HistoryBucket[] = [];
    for (let k = Math.min(n, this.bucketCount) - 1; k >= 0; k--) out.push(this.view(current - k * this.bucketMs));
    return out;
  }

  /** Of the last `n` buckets, those changed after `version`, plus the current one (a live chart keeps moving). */
  changedSince(version: number, nowMs: number, n = this.bucketCount): HistoryBucket[] {
    const current = this.bucketStart(nowMs);
    const out: HistoryBucket[] = [];
    for (let k = Math.min(n, this.bucketCount) - 1; k >= 0; k--) {
      const start = current - k * this.bucketMs;
      const slot = this.slotAt(start);
      if (start === current || (slot.start === start && slot.version > version)) out.push(this.view(start));
    }
    return out;
  }

  /** The last `n` buckets' histograms merged: percentiles of all their samples. */
  summary(nowMs: number, n = this.bucketCount): RangeFigures {
    const current = this.bucketStart(nowMs);
    const counts = new Float64Array(MEASURES);
    for (const m of this.merged) m.fill(0);
    let grants = 0;
    for (let k = 0; k < Math.min(n, this.bucketCount); k++) {
      const slot = this.gathered(current - k * this.bucketMs);
      if (slot === null) continue;
      grants += slot.grants;
      for (let m = 0; m < MEASURES; m++) {
        const h = slot.hists[m];
        const into = this.merged[m];
        if (h && into) addInto(into, h);
        counts[m] = (counts[m] ?? 0) + (slot.counts[m] ?? 0);
      }
    }
    return this.figuresOf(grants, counts, this.merged);
  }

  /**
   * The in-daemon handover p50/p95/p99 of all causes merged, over every bucket that overlaps the
   * last `windowMs` (see eachSlotInWindow): percentiles of all the samples (within the stated
   * error), not a mix of per-bucket figures.
   */
  handoverSummary(nowMs: number, windowMs: number): LatencySummary {
    const merged = this.summaryScratch.fill(0);
    let count = 0;
    this.eachSlotInWindow(nowMs, windowMs, (slot) => {
      for (const cause of HANDOVER_CAUSES) {
        const m = CAUSE_INDEX[cause];
        const h = slot.hists[m];
        if (h === null || h === undefined) continue;
        addInto(merged, h);
        count += slot.counts[m] ?? 0;
      }
    });
    return latencySummary(merged, count);
  }

  /** The same per cause, from one walk over the window's buckets. */
  handoverByCause(nowMs: number, windowMs: number): Record<HandoverCause, LatencySummary> {
    const counts = new Float64Array(HANDOVER_CAUSES.length);
    for (const cause of HANDOVER_CAUSES) this.merged[CAUSE_INDEX[cause]]?.fill(0);
    this.eachSlotInWindow(nowMs, windowMs, (slot) => {
      for (const cause of HANDOVER_CAUSES) {
        const m = CAUSE_INDEX[cause];
        const h = slot.hists[m];
        const into = this.merged[m];
        if (h === null || h === undefined || into === undefined) continue;
        addInto(into, h);
        counts[m] = (counts[m] ?? 0) + (slot.counts[m] ?? 0);
      }
    });
    const out = {} as Record<HandoverCause, LatencySummary>;
    for (const cause of HANDOVER_CAUSES) {
      const m = CAUSE_INDEX[cause];
      out[cause] = latencySummary(this.merged[m] ?? [], counts[m] ?? 0);
    }
    return out;
  }

  /**
   * Visits the live bucket of every slot that overlaps the last `windowMs` (capped at the ring's
   * span), newest first: whole buckets, so up to one bucket more than asked.
   */
  private eachSlotInWindow(nowMs: number, windowMs: number, visit: (slot: Slot) => void): void {
    const from = nowMs - Math.min(Math.max(windowMs, 0), this.bucketMs * this.bucketCount);
    const current = this.bucketStart(nowMs);
    for (let k = 0; k < this.bucketCount; k++) {
      const start = current - k * this.bucketMs;
      if (start + this.bucketMs <= from) break;
      const slot = this.gathered(start);
      if (slot !== null) visit(slot);
    }
  }

  private figuresOf(grants: number, counts: Float64Array, hists: ReadonlyArray<ArrayLike<number> | null | undefined>): RangeFigures {
    const of = (m: number) => figures(hists[m] ?? [], counts[m] ?? 0);
    const handover = {} as Record<HandoverCause, CauseLatency>;
    for (const cause of HANDOVER_CAUSES) handover[cause] = of(CAUSE_INDEX[cause]);
    // Release, disconnect and force-release hand over in the same step: their blocked time is the handover.
    const blocked = { ...handover, expiry: of(BLOCKED_EXPIRY) };
    return { grants, queueWait: waitFigures(hists[WAIT] ?? [], counts[WAIT] ?? 0), hold: of(HOLD), blocked, handover };
  }

  private add(slot: Slot, measure: number, bin: number): void {
    const hist = (slot.hists[measure] ??= newHistogram());
    hist[bin] = (hist[bin] ?? 0) + 1;
    slot.counts[measure] = (slot.counts[measure] ?? 0) + 1;
    slot.version = ++this.versionCounter;
  }

  private slotAt(start: number): Slot {
    const n = this.bucketCount;
    const slot = this.slots[(((start / this.bucketMs) % n) + n) % n];
    if (slot === undefined) throw new RangeError(`no slot for bucket start ${start}`);
    return slot;
  }

  /** The slot for a record at `atMs`, recycled when it holds an older bucket; null for a record older than the ring. */
  private slotFor(atMs: number): Slot | null {
    // Two comparisons on the event stream's path; the ring arithmetic only when the bucket moves.
    if (atMs >= this.hotFrom && atMs < this.hotTo && this.hotSlot !== null) return this.hotSlot;
    const slot = this.findSlot(atMs);
    if (slot !== null && slot.start + this.bucketMs > this.hotTo - this.bucketMs) {
      this.hotSlot = slot;
      this.hotFrom = slot.start;
      this.hotTo = slot.start + this.bucketMs;
    }
    return slot;
  }

  private findSlot(atMs: number): Slot | null {
    if (!Number.isFinite(atMs)) return null;
    const start = this.bucketStart(atMs);
    const slot = this.slotAt(start);
    if (slot.start === start) return slot;
    if (slot.start > start) return null;
    if (this.rollup !== null && slot.start !== Number.NEGATIVE_INFINITY) this.rollup.absorbSlot(slot);
    slot.reset(start);
    return slot;
  }

  /** The ring's buckets that hold anything, for the data dir; the arrays are the ring's own (copy before keeping). */
  saved(): SavedBucket[] {
    const out: SavedBucket[] = [];
    for (const slot of this.slots) {
      if (slot.start === Number.NEGATIVE_INFINITY) continue;
      out.push({ start: slot.start, grants: slot.grants, counts: Array.from(slot.counts), hists: slot.hists });
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /**
   * Adds saved buckets back (at start). A bucket not on this ring's boundaries or after `nowMs` is
   * skipped; one older than the ring's span goes to the coarser ring it rolls up into, if any,
   * as its own slot would have when recycled. Returns how many buckets were taken.
   */
  restore(buckets: readonly SavedBucket[], nowMs: number): number {
    const oldest = this.bucketStart(nowMs) - (this.bucketCount - 1) * this.bucketMs;
    const scratch = new Slot();
    let taken = 0;
    for (const b of buckets) {
      if (b.start % this.bucketMs !== 0 || b.start > nowMs) continue;
      scratch.reset(b.start);
      scratch.grants = b.grants;
      for (let m = 0; m < MEASURES; m++) {
        const h = b.hists[m];
        scratch.counts[m] = b.counts[m] ?? 0;
        if (h !== null && h !== undefined) (scratch.hists[m] ??= newHistogram()).set(h);
      }
      const into = b.start >= oldest ? this : this.rollup;
      if (into === null) continue;
      into.absorbSlot(scratch);
      taken++;
    }
    this.hotSlot = null;
    this.hotFrom = Number.POSITIVE_INFINITY;
    this.hotTo = Number.NEGATIVE_INFINITY;
    return taken;
  }

  /** Takes a finer ring's bucket that is leaving it. */
  private absorbSlot(fine: Slot): void {
    const slot = this.slotFor(fine.start);
    if (slot === null) return;
    slot.absorb(fine);
    slot.version = ++this.versionCounter;
  }

  /** The bucket at `start` as reads see it: this ring's slot and the pending finer slots inside it; null when neither has it. */
  private gathered(start: number): Slot | null {
    const own = this.slotAt(start);
    const ownLive = own.start === start;
    const fine = this.pending;
    if (fine === null) return ownLive ? own : null;
    const out = this.gatheredSlot;
    out.reset(start);
    let any = false;
    if (ownLive) {
      out.absorb(own);
      any = true;
    }
    for (let t = start; t < start + this.bucketMs; t += fine.bucketMs) {
      const f = fine.slotAt(t);
      if (f.start === t) {
        out.absorb(f);
        any = true;
      }
    }
    return any ? out : null;
  }

  private view(start: number): HistoryBucket {
    const found = this.gathered(start);
    const live = found !== null;
    const slot = found ?? this.slotAt(start);
    const counts = live ? slot.counts : new Float64Array(MEASURES);
    const f = this.figuresOf(live ? slot.grants : 0, counts, live ? slot.hists : []);
    let handovers = 0;
    const all = this.merged[0]?.fill(0) ?? new Float64Array(BINS);
    for (const cause of HANDOVER_CAUSES) {
      const c = CAUSE_INDEX[cause];
      handovers += counts[c] ?? 0;
      const h = live ? slot.hists[c] : null;
      if (h) addInto(all, h);
    }
    const overall = figures(all, handovers);
    return {
      start,
      grants: f.grants,
      handovers,
      p50: overall.p50,
      p99: overall.p99,
      byCause: f.handover,
      queueWait: f.queueWait,
      hold: f.hold,
      blocked: f.blocked,
    };
  }
}
