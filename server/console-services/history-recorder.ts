// Feeds the engine's grants into the charts' latency history and answers the history reads
// of the ops API and the SSE hub. Events carry the engine's monotonic time; the history keeps
// wall-clock buckets, so each event is mapped through the view clock as it arrives.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { HandoverCause, HistoryBucket, LatencySummary } from '../../lib/ops-api/api-types.ts';
import { LatencyHistory, bucketStart } from './latency-history.ts';
import type { ViewClock } from './lock-views.ts';

/** The history reads of the overview (stats-view.ts): the charts' buckets and the latency figures. */
export interface HistoryFacade {
  /** The last 15 minutes in 10-second buckets, oldest first. */
  buckets(): HistoryBucket[];
  /** Handover latency over the last `windowMs`. */
  summary(windowMs: number): LatencySummary;
  /** The same per cause. */
  summaryByCause(windowMs: number): Record<HandoverCause, LatencySummary>;
}

/** What the SSE hub reads: the whole history for a snapshot, and what changed for a delta. */
export interface HistorySource {
  /** Changes whenever a bucket does. */
  readonly version: number;
  /** Start of the bucket that holds now: a new one means the chart's x axis moved. */
  currentBucketStart(): number;
  buckets(): HistoryBucket[];
  /** Buckets changed after `version`, plus the current one (see LatencyHistory.changedSince). */
  changedSince(version: number): HistoryBucket[];
}

export class HistoryRecorder implements HistoryFacade, HistorySource {
  private readonly history = new LatencyHistory();
  private unsubscribe: (() => void) | null;
  /** Wall ms minus engine ms, as last read from the clock, and the engine time it was read at. */
  private offset = 0;
  private offsetAt = Number.NEGATIVE_INFINITY;
  /** Every grant since start (the overview's total): counted here, not by one more listener. */
  grantsTotal = 0;

  constructor(
    engine: Pick<LockEngine, 'subscribe'>,
    private readonly clock: Pick<ViewClock, 'wall'>,
    /** Wall-clock now (epoch ms) for reads; injectable for tests. */
    private readonly wallNow: () => number = Date.now,
  ) {
    // On the engine's hot path: an addition, a Math.log and a few array stores per grant.
    this.unsubscribe = engine.subscribe((e: LockEvent) => {
      if (e.type !== 'grant') return;
      this.grantsTotal++;
      const at = this.wallOf(e.at);
      this.history.recordGrant(at);
      if (e.handoverCause !== null) this.history.recordHandover(at, e.handoverCause, e.handoverMs ?? 0);
    });
  }

  /**
   * The view clock may read two clocks per call (the daemon's does: Date.now and
   * performance.now), a third of the recorder's cost per grant. Their offset moves only when the
   * wall clock is adjusted, so it is re-read once per engine second, not per grant.
   */
  private wallOf(engineMs: number): number {
    if (engineMs - this.offsetAt >= 1_000 || engineMs < this.offsetAt) {
      this.offset = this.clock.wall(engineMs) - engineMs;
      this.offsetAt = engineMs;
    }
    return this.offset + engineMs;
  }

  get version(): number {
    return this.history.version;
  }

  currentBucketStart(): number {
    return bucketStart(this.wallNow());
  }

  buckets(): HistoryBucket[] {
    return this.history.buckets(this.wallNow());
  }

  changedSince(version: number): HistoryBucket[] {
    return this.history.changedSince(version, this.wallNow());
  }

  summary(windowMs: number): LatencySummary {
    return this.history.summary(this.wallNow(), windowMs);
  }

  /** Merging 15 minutes of histograms is the dear part of a stats read: kept until the history or the window moves. */
  private byCauseCache: { key: string; value: Record<HandoverCause, LatencySummary> } | null = null;

  summaryByCause(windowMs: number): Record<HandoverCause, LatencySummary> {
    const now = this.wallNow();
    const key = `${this.history.version}/${bucketStart(now)}/${windowMs}`;
    if (this.byCauseCache?.key !== key) this.byCauseCache = { key, value: this.history.summaryByCause(now, windowMs) };
    return this.byCauseCache.value;
  }

  /** Stops listening to the engine. Safe to call twice. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}
