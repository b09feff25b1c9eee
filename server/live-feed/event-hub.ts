// The dashboard's live feed (GET /api/v1/events): a snapshot for each new stream, then
// coalesced deltas shared by all of them.
//
// Cost model. With no subscriber the hub only keeps the feed ring (one array store per engine
// event). From the first subscriber on it also collects the names of locks that events touch
// (a Set.add per event, at most MAX_DIRTY names) and runs a flush timer; each flush builds at
// most one delta from the current engine state (a snapshot when more names changed than that),
// encodes it once and hands the same bytes to every stream that has its snapshot header.
// However busy the engine is, a stream gets at most one delta per flush interval.
//
// Snapshots. Streams that arrive within JOIN_WINDOW_MS of each other share one snapshot: one header
// (stats, cluster, history, feed, the table's first HEAD_LOCKS locks in name order: the rows a
// dashboard shows first; for a table over HEAD_SCAN_MAX_LOCKS, the walk's first page), then the
// rest of the table in pages built lazily and shared (snapshot-pass.ts, which also says why
// pages and deltas may interleave). Streams that join later start passes of their own; one
// pump a loop turn serves every pass with work within one TurnBudget, so how many passes are
// under way (a reconnect storm spread over seconds) does not change what a turn costs. What a
// stream costs is bounded: one page queued when it does not read, the slow-reader limit
// (4 MiB, pages held for it included) when it reads too slowly, and STALLED_READER_MS when it
// takes nothing at all; streams are capped per client address.
//
// Snapshots and deltas are not ordered per subscriber: a delta right after a snapshot may
// repeat what the snapshot showed. Both are idempotent for a reader (upserts replace, removals
// of unknown names are no-ops, feed items carry `seq`: skip seq ≤ the last one seen).
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { ClusterView, CoordinationView, DeltaMessage, LockSummary, SnapshotMessage, StatsView } from '../../lib/ops-api/api-types.ts';
import type { AuditFacade, FeedFacade, FeedJoin, FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { LOW_WATER_BYTES, MAX_BUFFERED_BYTES } from '../../lib/ops-api/feed-limits.ts';
import { FeedRing } from './feed-ring.ts';
import type { HistorySource } from '../chart-history/history-recorder.ts';
import { lockSummary, type ViewClock } from '../lock-views/lock-views.ts';
import { RENEWAL_SCAN_MS, RenewalScan } from './renewal-scan.ts';
import {
  BUILDS_PER_TURN,
  CHUNK_BYTES,
  CHUNK_LOCKS,
  CHUNK_MS,
  HEAD_LOCKS,
  HEAD_SCAN_MAX_LOCKS,
  SEND_BYTES,
  encodeFrame,
  encodeFrameWithLocks,
  type EncodedLocks,
  type PassMember,
  SnapshotPass,
  type TurnBudget,
} from './snapshot-pass.ts';
import { clientKey } from '../console-auth/client-key.ts';
import { StreamLimits } from './stream-limits.ts';

export type TimerHandle = ReturnType<typeof setInterval> | number;

/** The timers the hub runs; tests inject one they fire by hand. */
export interface Scheduler {
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
  /** Runs `fn` after the loop has had its turn at I/O (setImmediate), or after `ms` (setTimeout). */
  defer(fn: () => void, ms?: number): void;
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
  defer(fn, ms) {
    if (ms === undefined) setImmediate(fn).unref();
    else setTimeout(fn, ms).unref();
  },
};

/**
 * Streams that arrive within this long of each other share one snapshot (a reconnect storm after
 * a restart, or a proxy reopening its streams, costs one walk of the table, not one each).
 */
export const JOIN_WINDOW_MS = 20;
/** A stream that has queued output and took none of it for this long is cut off. */
export const STALLED_READER_MS = 30_000;

export interface EventHubDeps {
  engine: Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock' | 'lockCount'>;
  clock: ViewClock;
  instanceId: string;
  stats(): StatsView;
  cluster(): ClusterView;
  history: HistorySource;
  /**
   * `latest`: the audit's newest arrival position. Messages carry it when it moved, so a page
   * re-reads its audit even when the admin item was pushed out of the 200-item feed before a
   * delta took it (a role change replays the whole table right after its handoff entry).
   */
  audit: Pick<AuditFacade, 'subscribe'> & { readonly latest?: number };
  scheduler?: Scheduler;
  /** At most one delta per stream this often. */
  flushIntervalMs?: number;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  streamsPerClient?: number;
  maxStreams?: number;
  /** Locks, JSON code units and loop time per snapshot page at most (tests make pages small). */
  chunkLocks?: number;
  chunkBytes?: number;
  chunkMs?: number;
  /** Bytes of snapshot pages one loop turn hands out at most, over all streams. */
  sendBytes?: number;
  /** Locks in a snapshot's header, the table's first in name order (0: the walk's first page instead). */
  headLocks?: number;
  /** Tables larger than this get the walk's first page in the header instead (HEAD_SCAN_MAX_LOCKS). */
  headScanMaxLocks?: number;
  /** A stream gets more of its snapshot with less than this queued; the route's queue uses the same mark. */
  lowWaterBytes?: number;
  /** Real time for bounding a page's loop time. */
  sliceClock?: () => number;
}

/**
 * Sent to every live stream each heartbeat interval (500 ms): it keeps proxies from closing an idle
 * stream, and it is a named event (a comment would not reach the page's script) so that the page
 * can tell a stream that is quiet from one whose node is gone (SIGSTOP, a black-holed link): 1.5 s
 * without any message and the page says it lost contact, within 2 s of the loss. One shared timer and one constant frame
 * for all streams, nothing per lock or per request.
 */
export const HEARTBEAT_FRAME = 'event: ping\ndata: 1\n\n';
/** The heartbeat interval unless told otherwise. */
export const HEARTBEAT_MS = 500;
const HEARTBEAT_BYTES = new TextEncoder().encode(HEARTBEAT_FRAME);

/** Stats compare without their timestamp: a delta goes out only when a figure moved. */
function statsKey(stats: StatsView): string {
  return JSON.stringify({ ...stats, asOf: 0 });
}

/**
 * The cluster compares without this node's own `lastSeen`: for the node itself it is always
 * "now", so comparing it would send an idle dashboard a delta on every flush. The etcd mode's
 * running figures likewise: the grant time left and each endpoint's check age are compared as the
 * moments they stand for (`now` plus or minus them), which move only with a keep-alive or a probe;
 * the page counts them on from when the view arrived.
 */
function clusterKey(cluster: ClusterView, now: number): string {
  const c = cluster.coordination;
  return JSON.stringify({
    ...cluster,
    nodes: cluster.nodes.map((n) => (n.self ? { ...n, lastSeen: 0 } : n)),
    ...(c === undefined ? {} : { coordination: steadyCoordination(c, now) }),
  });
}

/** The grain of those moments in the key: finer than a keep-alive's step (a third of a TTL), coarser than a read's jitter. */
const MOMENT_GRAIN_MS = 250;

function steadyCoordination(c: CoordinationView, now: number): unknown {
  const moment = (ms: number) => Math.round(ms / MOMENT_GRAIN_MS);
  const left = c.lease.grantRemainingMs;
  return {
    ...c,
    // A permission that ran out reads 0 from then on: steady as it is.
    lease: { ...c.lease, grantRemainingMs: left === null || left <= 0 ? left : { until: moment(now + left) } },
    endpoints: c.endpoints.map((e) => ({ ...e, checkedAgoMs: e.checkedAgoMs === null ? null : { at: moment(now - e.checkedAgoMs) } })),
    // A quiet period counts down like the grant time: its end is what stays put.
    quiet: c.quiet === null || c.quiet.remainingMs === null ? c.quiet : { by: c.quiet.by, until: moment(now + c.quiet.remainingMs) },
  };
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

/** One open stream. */
interface Stream extends PassMember {
  readonly client: string;
  /** Has its snapshot header: gets deltas and heartbeats. */
  live: boolean;
  /** The snapshot it is joining or paging through; null once it has the whole table. */
  pass: SnapshotPass<Stream> | null;
  /** What it had taken at the last stall check, and when that last grew. */
  taken: number;
  takenAt: number;
}

export class EventHub implements FeedFacade {
  private readonly streams = new Map<FeedSubscriber, Stream>();
  private readonly feed: FeedRing;
  private readonly dirty = new Set<string>();
  /** More than MAX_DIRTY names changed since the last flush, or the engine was reset: the next message is a snapshot. */
  private dirtyOverflow = false;
  private readonly scheduler: Scheduler;
  private readonly flushIntervalMs: number;
  private readonly heartbeatMs: number;
  private readonly maxBufferedBytes: number;
  private readonly limits: StreamLimits;
  private readonly stopFeed: () => void;
  private readonly stopAudit: () => void;
  private tracking: Tracking | null = null;
  private closed = false;
  /** The snapshot that streams arriving now join; it starts JOIN_WINDOW_MS after its first member came. */
  private forming: SnapshotPass<Stream> | null = null;
  private liveCount = 0;
  /** Passes whose streams have room for more pages; pumped together, one turn at a time (pumpTurn). */
  private readonly paging = new Set<SnapshotPass<Stream>>();
  private pumpScheduled = false;
  // What the last message that every live stream has seen carried: deltas send what moved since.
  private sentFeedSeq = 0;
  private sentAuditSeq = 0;
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
    this.heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS;
    this.maxBufferedBytes = deps.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.limits = new StreamLimits(deps.streamsPerClient, deps.maxStreams);
    this.feed = new FeedRing(deps.clock);
    this.stopFeed = deps.engine.subscribe((e: LockEvent) => this.feed.push(e));
    this.stopAudit = deps.audit.subscribe((entry) => this.feed.push(entry));
  }

  get subscriberCount(): number {
    return this.streams.size;
  }

  subscribe(subscriber: FeedSubscriber, client: string): FeedJoin {
    if (this.closed) {
      subscriber.close();
      return { ok: true, leave: () => {}, pull: () => {} };
    }
    const key = clientKey(client);
    const taken = this.limits.take(key);
    if (!taken.ok) return { ok: false, error: 'too-many-streams', detail: taken.detail };
    if (this.streams.size === 0) this.startTracking();
    const stream: Stream = { sub: subscriber, client: key, live: false, pass: null, position: 0, taken: 0, takenAt: this.deps.clock.now() };
    this.streams.set(subscriber, stream);
    let pass = this.forming;
    if (pass === null) {
      pass = this.newPass();
      this.forming = pass;
      const starting = pass;
      this.scheduler.defer(() => this.startPass(starting), JOIN_WINDOW_MS);
    }
    this.join(stream, pass);
    return { ok: true, leave: () => this.drop(stream, false), pull: () => this.wake(stream.pass) };
  }

  /** Ends every stream and stops listening. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stream of [...this.streams.values()]) this.drop(stream, true);
    this.stopTracking();
    this.stopFeed();
    this.stopAudit();
  }

  /** Builds and sends one delta if anything changed since the last one. Runs on the flush timer. */
  flush(): void {
    if (this.streams.size === 0) return;
    if (++this.flushes % Math.max(1, Math.round(RENEWAL_SCAN_MS / this.flushIntervalMs)) === 0) {
      this.renewals.scan(
        (name) => this.deps.engine.lock(name),
        (name) => this.markDirty(name),
      );
      this.cutStalled();
    }
    if (this.liveCount === 0) return;
    if (this.dirtyOverflow) {
      this.resync();
      return;
    }
    const { history } = this.deps;
    const feedChanged = this.feed.lastSeq !== this.sentFeedSeq;
    const auditSeq = this.deps.audit.latest ?? 0;
    const auditChanged = auditSeq !== this.sentAuditSeq;
    const bucketStart = history.currentBucketStart();
    const historyChanged = history.version !== this.sentHistoryVersion || bucketStart !== this.sentBucketStart;
    const cluster = this.deps.cluster();
    const clusterNow = clusterKey(cluster, this.deps.clock.now());
    const clusterChanged = clusterNow !== this.sentClusterKey;
    const stats = this.deps.stats();
    const key = statsKey(stats);
    if (this.dirty.size === 0 && !feedChanged && !auditChanged && !historyChanged && !clusterChanged && key === this.sentStatsKey) return;

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
      ...(auditChanged ? { audit: auditSeq } : {}),
    };
    this.dirty.clear();
    this.sentFeedSeq = this.feed.lastSeq;
    this.sentAuditSeq = auditSeq;
    this.sentHistoryVersion = history.version;
    this.sentBucketStart = bucketStart;
    this.sentClusterKey = clusterNow;
    this.sentStatsKey = key;
    this.broadcast(encodeFrame('delta', delta));
  }

  /** Too much changed to list: every stream starts over from a fresh snapshot (readers replace their state with it). */
  private resync(): void {
    const pass = this.newPass();
    for (const stream of this.streams.values()) {
      stream.pass?.members.delete(stream);
      if (stream.live) this.liveCount--;
      stream.live = false;
      this.join(stream, pass);
    }
    if (this.forming !== null && this.forming.members.size === 0) this.forming = null;
    this.startPass(pass);
  }

  private newPass(): SnapshotPass<Stream> {
    const d = this.deps;
    return new SnapshotPass<Stream>(d.engine, d.clock, {
      chunkLocks: d.chunkLocks ?? CHUNK_LOCKS,
      chunkBytes: d.chunkBytes ?? CHUNK_BYTES,
      sendBytes: d.sendBytes ?? SEND_BYTES,
      chunkMs: d.chunkMs ?? CHUNK_MS,
      maxBehind: this.maxBufferedBytes,
      lowWater: d.lowWaterBytes ?? LOW_WATER_BYTES,
      now: d.sliceClock ?? (() => performance.now()),
      headByName: d.engine.lockCount <= (d.headScanMaxLocks ?? HEAD_SCAN_MAX_LOCKS) ? (d.headLocks ?? HEAD_LOCKS) : 0,
    });
  }

  private join(stream: Stream, pass: SnapshotPass<Stream>): void {
    stream.pass = pass;
    stream.position = 1;
    pass.members.add(stream);
  }

  /**
   * Sends the pass's header (with the first page of locks) to its members, who from now on
   * get deltas, then pages the rest of the table to them.
   */
  private startPass(pass: SnapshotPass<Stream>): void {
    if (this.forming === pass) this.forming = null;
    if (pass.members.size === 0) return;
    let snapshot: Omit<SnapshotMessage, 'locks'>;
    let locks: EncodedLocks;
    try {
      locks = pass.first();
      snapshot = this.snapshot(pass);
    } catch {
      // A view that cannot be built (a bug): these streams end; their readers reconnect.
      for (const m of [...pass.members]) this.drop(m, true);
      return;
    }
    if (this.liveCount === 0) {
      // Nobody has seen anything older than this snapshot: deltas start from here.
      this.markSent(snapshot);
      this.dirty.clear();
      this.dirtyOverflow = false;
    }
    const frame = encodeFrameWithLocks('snapshot', locks, snapshot);
    for (const stream of [...pass.members]) {
      stream.live = true;
      this.liveCount++;
      if (!this.deliver(stream.sub, frame)) this.drop(stream, true);
      else if (pass.done) this.leavePass(stream);
    }
    this.wake(pass);
  }

  /** Marks `pass` as having work, for the next turn's pump of every such pass. */
  private wake(pass: SnapshotPass<Stream> | null): void {
    if (pass === null || pass === this.forming || pass.members.size === 0) return;
    this.paging.add(pass);
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    this.scheduler.defer(() => this.pumpTurn());
  }

  /**
   * One loop turn of snapshot paging for every pass with work, within one TurnBudget: streams
   * that joined at different times are in different passes, and however many there are, a
   * turn builds BUILDS_PER_TURN pages and hands out sendBytes in all. The passes take turns
   * being first, so each gets its share.
   */
  private pumpTurn(): void {
    this.pumpScheduled = false;
    const passes = [...this.paging];
    this.paging.clear();
    const turn: TurnBudget = { bytes: this.deps.sendBytes ?? SEND_BYTES, builds: BUILDS_PER_TURN };
    // Passes with work come back in the order they were pumped: last turn's first goes last.
    for (const pass of [...passes.slice(1), ...passes.slice(0, 1)]) {
      if (pass.members.size === 0) continue;
      const again = pass.pump(
        (m) => this.drop(m, true),
        (m) => this.leavePass(m),
        turn,
      );
      if (again) this.wake(pass);
    }
  }

  private leavePass(stream: Stream): void {
    stream.pass?.members.delete(stream);
    stream.pass = null;
  }

  /** Remembers what `snapshot` showed: the next delta carries only what moved after it. */
  private markSent(snapshot: Pick<SnapshotMessage, 'cluster' | 'stats'>): void {
    this.sentFeedSeq = this.feed.lastSeq;
    this.sentAuditSeq = this.deps.audit.latest ?? 0;
    this.sentHistoryVersion = this.deps.history.version;
    this.sentBucketStart = this.deps.history.currentBucketStart();
    this.sentClusterKey = clusterKey(snapshot.cluster, this.deps.clock.now());
    this.sentStatsKey = statsKey(snapshot.stats);
  }

  /** The header around the first page of locks (pass.first(), taken just before). */
  private snapshot(pass: SnapshotPass<Stream>): Omit<SnapshotMessage, 'locks'> {
    const total = this.deps.engine.lockCount;
    return {
      instanceId: this.deps.instanceId,
      asOf: this.wallNow(),
      stats: this.deps.stats(),
      cluster: this.deps.cluster(),
      pending: !pass.done,
      total,
      firstByName: pass.firstByName,
      history: this.deps.history.buckets(),
      feed: this.feed.since(0),
      audit: this.deps.audit.latest ?? 0,
    };
  }

  /** Deltas and heartbeats go to streams that have their snapshot header. */
  private broadcast(frame: Uint8Array): void {
    // Deleting from a Map while iterating it is safe: later entries are still visited.
    for (const stream of this.streams.values()) {
      if (stream.live && !this.deliver(stream.sub, frame)) this.drop(stream, true);
    }
  }

  /** Cuts streams whose reader took nothing for STALLED_READER_MS while output waited for it. */
  private cutStalled(): void {
    const now = this.deps.clock.now();
    for (const stream of this.streams.values()) {
      const taken = stream.sub.takenBytes();
      if (taken !== stream.taken || stream.sub.queuedBytes() === 0) {
        stream.taken = taken;
        stream.takenAt = now;
      } else if (now - stream.takenAt >= STALLED_READER_MS) {
        this.drop(stream, true);
      }
    }
  }

  /** A subscriber that throws counts as one that can take no more; it must not stop the others. */
  private deliver(subscriber: FeedSubscriber, frame: Uint8Array): boolean {
    try {
      return subscriber.send(frame);
    } catch {
      return false;
    }
  }

  private drop(stream: Stream, close: boolean): void {
    if (this.streams.get(stream.sub) !== stream) return;
    this.streams.delete(stream.sub);
    this.limits.give(stream.client);
    if (stream.live) this.liveCount--;
    this.leavePass(stream);
    if (close) {
      try {
        stream.sub.close();
      } catch {
        // already gone: nothing left to end
      }
    }
    if (this.streams.size === 0) this.stopTracking();
  }

  private startTracking(): void {
    if (this.tracking !== null) return;
    this.dirty.clear();
    this.dirtyOverflow = false;
    this.renewals.reset(this.deps.engine.allLocks());
    this.tracking = {
      stopEngine: this.deps.engine.subscribe((e: LockEvent) => {
        // The whole state was replaced: like an overflow, the next flush sends a snapshot.
        if (e.type === 'reset') {
          this.dirtyOverflow = true;
          this.renewals.reset(this.deps.engine.allLocks());
        } else {
          this.markDirty(e.lock);
          if (e.type === 'grant' && e.sliding) this.renewals.noteGrant(e.lock);
        }
      }),
      flushTimer: this.scheduler.setInterval(() => this.flush(), this.flushIntervalMs),
      heartbeatTimer: this.scheduler.setInterval(() => this.broadcast(HEARTBEAT_BYTES), this.heartbeatMs),
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
