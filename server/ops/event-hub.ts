// The dashboard's live feed (GET /api/v1/events): one snapshot per new subscriber, then
// coalesced deltas shared by all of them.
//
// Cost model. With no subscriber the hub only keeps the feed ring (one array store per engine
// event). From the first subscriber on it also collects the names of locks that events touch
// (a Set.add per event, at most MAX_DIRTY names) and runs a flush timer; each flush builds at
// most one delta from the current engine state (a snapshot when more names changed than that),
// encodes it once and hands the same frame string to every subscriber.
// However busy the engine is, a stream gets at most one delta per flush interval.
//
// Snapshots and deltas are not ordered per subscriber: a delta right after a snapshot may
// repeat what the snapshot showed. Both are idempotent for a reader (upserts replace, removals
// of unknown names are no-ops, feed items carry `seq`: skip seq ≤ the last one seen).
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { ClusterView, DeltaMessage, LockSummary, SnapshotMessage, StatsView } from '../../lib/ops/api-types.ts';
import type { AuditFacade, FeedFacade, FeedSubscriber } from '../daemon-facade.ts';
import { FeedRing } from './feed-ring.ts';
import type { HistorySource } from './history-recorder.ts';
import { lockSummary, type ViewClock } from './lock-views.ts';
import { RENEWAL_SCAN_MS, RenewalScan } from './renewal-scan.ts';

export type TimerHandle = ReturnType<typeof setInterval> | number;

/** The timers the hub runs; tests inject one they fire by hand. */
export interface Scheduler {
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

/** Real timers, unref'd: an open dashboard must not keep the process alive. */
export const realScheduler: Scheduler = {
  setInterval(fn, ms) {
    const handle = setInterval(fn, ms);
    handle.unref();
    return handle;
  },
  clearInterval(handle) {
    clearInterval(handle);
  },
};

export interface EventHubDeps {
  engine: Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock'>;
  clock: ViewClock;
  instanceId: string;
  stats(): StatsView;
  cluster(): ClusterView;
  history: HistorySource;
  audit: Pick<AuditFacade, 'subscribe'>;
  scheduler?: Scheduler;
  /** At most one delta per stream this often. */
  flushIntervalMs?: number;
  heartbeatMs?: number;
}

export const HEARTBEAT_FRAME = ': heartbeat\n\n';

export function sseFrame(event: 'snapshot' | 'delta', data: unknown): string {
  // JSON.stringify escapes newlines inside strings, so the payload is always one data line.
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Stats compare without their timestamp: a delta goes out only when a figure moved. */
function statsKey(stats: StatsView): string {
  return JSON.stringify({ ...stats, asOf: 0 });
}

/**
 * The cluster compares without this node's own `lastSeen`: for the node itself it is always
 * "now", so comparing it would send an idle dashboard a delta on every flush.
 */
function clusterKey(cluster: ClusterView): string {
  return JSON.stringify({ ...cluster, nodes: cluster.nodes.map((n) => (n.self ? { ...n, lastSeen: 0 } : n)) });
}

/**
 * Distinct lock names collected between two flushes, at most. Past it the hub stops collecting
 * (memory stays bounded however many names a burst touches) and the next flush sends every
 * stream a fresh snapshot instead of a delta.
 */
export const MAX_DIRTY = 10_000;

interface Tracking {
  stopEngine: () => void;
  flushTimer: TimerHandle;
  heartbeatTimer: TimerHandle;
}

export class EventHub implements FeedFacade {
  private readonly subscribers = new Set<FeedSubscriber>();
  private readonly feed: FeedRing;
  private readonly dirty = new Set<string>();
  /** More than MAX_DIRTY names changed since the last flush, or the engine was reset: the next message is a snapshot. */
  private dirtyOverflow = false;
  private readonly scheduler: Scheduler;
  private readonly flushIntervalMs: number;
  private readonly heartbeatMs: number;
  private readonly stopFeed: () => void;
  private readonly stopAudit: () => void;
  private tracking: Tracking | null = null;
  private closed = false;
  // What the last message that every subscriber has seen carried: deltas send what moved since.
  private sentFeedSeq = 0;
  private sentHistoryVersion = 0;
  private sentBucketStart = 0;
  private sentClusterKey = '';
  private sentStatsKey = '';
  /** Heartbeats move session leases without events; looked for every RENEWAL_SCAN_MS (see renewal-scan.ts). */
  private readonly renewals = new RenewalScan();
  private flushes = 0;

  constructor(private readonly deps: EventHubDeps) {
    this.scheduler = deps.scheduler ?? realScheduler;
    this.flushIntervalMs = deps.flushIntervalMs ?? 100;
    this.heartbeatMs = deps.heartbeatMs ?? 15_000;
    this.feed = new FeedRing(deps.clock);
    this.stopFeed = deps.engine.subscribe((e: LockEvent) => this.feed.push(e));
    this.stopAudit = deps.audit.subscribe((entry) => this.feed.push(entry));
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  subscribe(subscriber: FeedSubscriber): () => void {
    if (this.closed) {
      subscriber.close();
      return () => {};
    }
    const first = this.subscribers.size === 0;
    if (first) this.startTracking();
    let snapshot: SnapshotMessage;
    try {
      snapshot = this.snapshot();
    } catch (err) {
      // Nobody to track for: let go of the engine and the timers before the error goes up.
      if (first) this.stopTracking();
      throw err;
    }
    // Nobody has seen anything older than this snapshot: deltas start from here.
    if (first) this.markSent(snapshot);
    if (!this.deliver(subscriber, sseFrame('snapshot', snapshot))) {
      subscriber.close();
      if (this.subscribers.size === 0) this.stopTracking();
      return () => {};
    }
    this.subscribers.add(subscriber);
    return () => this.drop(subscriber, false);
  }

  /** Ends every stream and stops listening. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const subscriber of [...this.subscribers]) this.drop(subscriber, true);
    this.stopTracking();
    this.stopFeed();
    this.stopAudit();
  }

  /** Builds and sends one delta if anything changed since the last one. Runs on the flush timer. */
  flush(): void {
    if (this.subscribers.size === 0) return;
    if (++this.flushes % Math.max(1, Math.round(RENEWAL_SCAN_MS / this.flushIntervalMs)) === 0) {
      this.renewals.scan(this.deps.engine.allLocks(), (name) => this.markDirty(name));
    }
    if (this.dirtyOverflow) {
      this.resync();
      return;
    }
    const { history } = this.deps;
    const feedChanged = this.feed.lastSeq !== this.sentFeedSeq;
    const bucketStart = history.currentBucketStart();
    const historyChanged = history.version !== this.sentHistoryVersion || bucketStart !== this.sentBucketStart;
    const cluster = this.deps.cluster();
    const clusterNow = clusterKey(cluster);
    const clusterChanged = clusterNow !== this.sentClusterKey;
    const stats = this.deps.stats();
    const key = statsKey(stats);
    if (this.dirty.size === 0 && !feedChanged && !historyChanged && !clusterChanged && key === this.sentStatsKey) return;

    const upserts: LockSummary[] = [];
    const removed: string[] = [];
    for (const name of this.dirty) {
      const lock = this.deps.engine.lock(name);
      if (lock === undefined) removed.push(name);
      else upserts.push(lockSummary(lock, this.deps.clock));
    }
    const delta: DeltaMessage = {
      asOf: this.wallNow(),
      stats,
      upserts,
      removed,
      history: historyChanged ? history.changedSince(this.sentHistoryVersion) : [],
      feed: feedChanged ? this.feed.since(this.sentFeedSeq) : [],
      cluster: clusterChanged ? cluster : null,
    };
    this.dirty.clear();
    this.sentFeedSeq = this.feed.lastSeq;
    this.sentHistoryVersion = history.version;
    this.sentBucketStart = bucketStart;
    this.sentClusterKey = clusterNow;
    this.sentStatsKey = key;
    this.broadcast(sseFrame('delta', delta));
  }

  /** Too much changed to list: every stream starts over from a fresh snapshot (readers replace their state with it). */
  private resync(): void {
    const snapshot = this.snapshot();
    this.dirty.clear();
    this.dirtyOverflow = false;
    this.markSent(snapshot);
    this.broadcast(sseFrame('snapshot', snapshot));
  }

  /** Remembers what `snapshot` showed: the next delta carries only what moved after it. */
  private markSent(snapshot: SnapshotMessage): void {
    this.sentFeedSeq = this.feed.lastSeq;
    this.sentHistoryVersion = this.deps.history.version;
    this.sentBucketStart = this.deps.history.currentBucketStart();
    this.sentClusterKey = clusterKey(snapshot.cluster);
    this.sentStatsKey = statsKey(snapshot.stats);
  }

  private snapshot(): SnapshotMessage {
    const locks: LockSummary[] = [];
    for (const lock of this.deps.engine.allLocks()) locks.push(lockSummary(lock, this.deps.clock));
    return {
      instanceId: this.deps.instanceId,
      asOf: this.wallNow(),
      stats: this.deps.stats(),
      cluster: this.deps.cluster(),
      locks,
      history: this.deps.history.buckets(),
      feed: this.feed.since(0),
    };
  }

  private broadcast(frame: string): void {
    // Deleting from a Set while iterating it is safe: later entries are still visited.
    for (const subscriber of this.subscribers) {
      if (!this.deliver(subscriber, frame)) this.drop(subscriber, true);
    }
  }

  /** A subscriber that throws counts as one that can take no more; it must not stop the others. */
  private deliver(subscriber: FeedSubscriber, frame: string): boolean {
    try {
      return subscriber.send(frame);
    } catch {
      return false;
    }
  }

  private drop(subscriber: FeedSubscriber, close: boolean): void {
    if (!this.subscribers.delete(subscriber)) return;
    if (close) {
      try {
        subscriber.close();
      } catch {
        // already gone: nothing left to end
      }
    }
    if (this.subscribers.size === 0) this.stopTracking();
  }

  private startTracking(): void {
    if (this.tracking !== null) return;
    this.dirty.clear();
    this.dirtyOverflow = false;
    this.tracking = {
      stopEngine: this.deps.engine.subscribe((e: LockEvent) => {
        // The whole state was replaced: like an overflow, the next flush sends a snapshot.
        if (e.type === 'reset') this.dirtyOverflow = true;
        else this.markDirty(e.lock);
      }),
      flushTimer: this.scheduler.setInterval(() => this.flush(), this.flushIntervalMs),
      heartbeatTimer: this.scheduler.setInterval(() => this.broadcast(HEARTBEAT_FRAME), this.heartbeatMs),
    };
  }

  private markDirty(name: string): void {
    if (this.dirty.size < MAX_DIRTY) this.dirty.add(name);
    else if (!this.dirty.has(name)) this.dirtyOverflow = true;
  }

  /** With no subscriber left the hub costs the engine nothing beyond the feed ring. */
  private stopTracking(): void {
    const t = this.tracking;
    if (t === null) return;
    this.tracking = null;
    this.renewals.reset();
    t.stopEngine();
    this.scheduler.clearInterval(t.flushTimer);
    this.scheduler.clearInterval(t.heartbeatTimer);
    this.dirty.clear();
    this.dirtyOverflow = false;
  }

  private wallNow(): number {
    return Math.round(this.deps.clock.wall(this.deps.clock.now()));
  }
}
