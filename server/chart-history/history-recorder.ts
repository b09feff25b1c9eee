// Feeds the engine's events into the charts' history and each lock's grant log, and answers the
// history reads of the ops API and the SSE hub. Events carry the engine's monotonic time; the
// history keeps wall-clock buckets, so each event is mapped through the view clock as it arrives.
//
// Two stores, each of fixed size: two MeasureRings (1 h of 10 s buckets and 24 h of 5 min
// buckets: queue wait, hold time, blocked time, in-daemon handover; the charts, and the
// overview's handover figures over the last minute and 15 minutes, read from the fine ring), and
// the GrantLog (each lock's last 50 ended grants). Per grant: one Math.log for the queue wait
// (none when it did not queue; one more for a handover) and array increments, and nothing for the
// grant log; per end, one Math.log for the hold time and a journal entry (the end event carries
// the whole grant); no object is made for any of it. The coarse ring is filled by rolling up the
// fine one, not per event.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { EndedHolder, LockEvent } from '../../lib/engine/events.ts';
import type { HandoverCause, HistoryBucket, HistoryRange, LatencySummary, LockHistory, StatsHistory } from '../../lib/ops-api/api-types.ts';
import { GrantLog } from './grant-log.ts';
import type { SavedHistory } from './history-file.ts';
import { binOf } from './log-histogram.ts';
import { MeasureRing } from './measure-ring.ts';
import type { ViewClock } from '../lock-views/lock-views.ts';

/** The window of the overview's handover figures per cause (`handoverByCause`). */
export const BY_CAUSE_WINDOW_MS = 15 * 60_000;

/** The event stream's history: the last 5 minutes of 10 s buckets (longer ranges are read by route). */
export const STREAM_BUCKETS = 30;
/** Buckets per range, and the ring each is read from. */
const RANGES: Record<HistoryRange, { ring: 'fine' | 'coarse'; buckets: number }> = {
  '5m': { ring: 'fine', buckets: 30 },
  '1h': { ring: 'fine', buckets: 360 },
  '24h': { ring: 'coarse', buckets: 288 },
};

/** The history reads of the overview (stats-view.ts): the charts' buckets and the latency figures. */
export interface HistoryFacade {
  /** The last 5 minutes in 10-second buckets, oldest first. */
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
  /** Buckets changed after `version`, plus the current one (see MeasureRing.changedSince). */
  changedSince(version: number): HistoryBucket[];
}

export class HistoryRecorder implements HistoryFacade, HistorySource {
  private readonly fine = new MeasureRing(10_000, 360);
  private readonly coarse = new MeasureRing(300_000, 288);
  readonly grantLog = new GrantLog();
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
    this.fine.rollUpInto(this.coarse);
    this.unsubscribe = engine.subscribe((e: LockEvent) => this.onEvent(e));
  }

  private onEvent(e: LockEvent): void {
    switch (e.type) {
      case 'grant':
        this.onGrant(e);
        return;
      case 'release':
        this.onEnd(e, e.cause === 'release' ? 'release' : 'close', Number.NaN);
        return;
      case 'expire':
        this.onEnd(e, 'expiry', e.lastAliveAt);
        return;
      case 'force-release':
        this.onEnd(e, 'force-release', Number.NaN);
        return;
      case 'kick':
        this.grantLog.kicked(e.lock, e.claimId, e.protocol, e.client, this.wallOf(e.at), e.waitedMs);
        return;
      case 'reset':
        this.grantLog.failover(e.ended, this.wallOf(e.at), (ms) => this.wallOf(ms));
        return;
      default:
        return;
    }
  }

  private onGrant(e: Extract<LockEvent, { type: 'grant' }>): void {
    this.grantsTotal++;
    const at = this.wallOf(e.at);
    const waitBin = binOf(e.waitedMs);
    this.fine.recordGrant(at, waitBin);
    const cause = e.handoverCause;
    if (cause !== null) {
      const handoverMs = e.handoverMs ?? 0;
      const bin = binOf(handoverMs);
      this.fine.recordHandover(at, cause, bin);
      if (cause === 'expiry') {
        // What the expiry cost this waiter: from the silent holder's last sign of life, or the
        // waiter's arrival when later, to now. Unknown (the lock was pushed out of the grant
        // log): the in-daemon figure, which is a lower bound.
        const lastAlive = this.grantLog.expiredLastAlive(e.lock);
        const blocked = Number.isNaN(lastAlive) ? handoverMs : Math.min(at - lastAlive, e.waitedMs);
        const blockedBin = binOf(blocked);
        this.fine.recordBlockedExpiry(at, blockedBin);
      }
    }
  }

  private onEnd(e: EndedHolder, end: 'release' | 'close' | 'expiry' | 'force-release', lastAliveAt: number): void {
    const at = this.wallOf(e.at);
    this.fine.recordHold(at, binOf(e.at - e.grantedAt));
    this.grantLog.ended(e, at, this.wallOf(e.grantedAt), end, Number.isNaN(lastAliveAt) ? lastAliveAt : this.wallOf(lastAliveAt));
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

  /** The stream's history version: the fine ring's (it records everything the stream's buckets show). */
  get version(): number {
    return this.fine.version;
  }

  currentBucketStart(): number {
    return this.fine.bucketStart(this.wallNow());
  }

  buckets(): HistoryBucket[] {
    return this.fine.buckets(this.wallNow(), STREAM_BUCKETS);
  }

  changedSince(version: number): HistoryBucket[] {
    return this.fine.changedSince(version, this.wallNow(), STREAM_BUCKETS);
  }

  /** One range of the charts (GET /api/v1/stats/history). */
  range(range: HistoryRange): StatsHistory {
    const asOf = this.wallNow();
    const { ring, buckets } = RANGES[range];
    const source = ring === 'fine' ? this.fine : this.coarse;
    return { range, asOf, bucketMs: source.bucketMs, buckets: source.buckets(asOf, buckets), summary: source.summary(asOf, buckets) };
  }

  /** The rings kept in the data dir (history-store.ts), finest first: what `saved()` and `restore()` carry. */
  get ringShapes(): Array<{ bucketMs: number; bucketCount: number }> {
    return [this.fine, this.coarse].map((r) => ({ bucketMs: r.bucketMs, bucketCount: r.bucketCount }));
  }

  /** Both rings' buckets as of now, for the data dir. */
  saved(): SavedHistory {
    return {
      savedAt: this.wallNow(),
      rings: [this.fine, this.coarse].map((r) => ({ bucketMs: r.bucketMs, bucketCount: r.bucketCount, buckets: r.saved() })),
    };
  }

  /** Puts a saved history back (at start): the coarse ring first, then the fine one (whose buckets past its hour go to the coarse). */
  restore(history: SavedHistory): number {
    const now = this.wallNow();
    const [fine, coarse] = history.rings;
    return (coarse === undefined ? 0 : this.coarse.restore(coarse.buckets, now)) + (fine === undefined ? 0 : this.fine.restore(fine.buckets, now));
  }

  /** One lock's last ended grants (GET /api/v1/locks/{name}/history). */
  lockHistory(name: string): LockHistory {
    return this.grantLog.history(name, this.wallNow());
  }

  summary(windowMs: number): LatencySummary {
    return this.fine.handoverSummary(this.wallNow(), windowMs);
  }

  /** Merging 15 minutes of histograms is the dear part of a stats read: kept until the ring or the window moves. */
  private byCauseCache: { key: string; value: Record<HandoverCause, LatencySummary> } | null = null;

  summaryByCause(windowMs: number): Record<HandoverCause, LatencySummary> {
    const now = this.wallNow();
    const key = `${this.fine.version}/${this.fine.bucketStart(now)}/${windowMs}`;
    if (this.byCauseCache?.key !== key) this.byCauseCache = { key, value: this.fine.handoverByCause(now, windowMs) };
    return this.byCauseCache.value;
  }

  /** Stops listening to the engine. Safe to call twice. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}
