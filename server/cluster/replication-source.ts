// The active side of replication: for each standby that asked (`sync`), a snapshot of the lock
// table streamed a slice per event-loop turn (snapshot-walk.ts), with every engine event in order
// alongside it and after it, batched per event-loop turn and encoded once for
// all standbys. Standbys ack each batch; the acks give the lag (events and ms) and let the
// token reservation wait until every connected standby has stored a new ceiling.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { Claim } from '../../lib/engine/claim.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { FailoverView, ReplicationLag } from '../../lib/cluster/peer-messages.ts';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import { DEFAULT_WALK_BUDGET, SnapshotWalk, type WalkBudget } from './snapshot-walk.ts';

/** What the source needs of a standby's link (a PeerLink; a recorder in tests). */
export interface StandbyLink {
  send(message: PeerMessage): void;
  sendRaw(line: string): void;
  close(reason: string): void;
  /** Bytes written but not yet taken by the kernel (a standby that stopped reading). */
  bufferedBytes(): number;
  /** Calls `then` once the bytes written have gone down to a little (never, if the link closes first). */
  whenDrained(then: () => void): void;
  /** Writes what is queued to the socket now, not at the end of the turn. */
  flushNow(): void;
}

/**
 * Unsent snapshot a slow standby may have queued on the active: the walk waits for the link to
 * drain before it reads more of the table (what is queued is the memory the join costs). Kept
 * small because everything else for that standby waits behind it, a `ceil` it must acknowledge
 * within a peer timeout too: 4 MiB took a standby applying on a busy host over a second, and the
 * active cut it off mid-join (then it started over, from an empty table).
 */
export const MAX_UNSENT_SNAPSHOT_BYTES = 1024 * 1024;

/**
 * How often the renewals of resumable sessions go to the standbys, in one coalesced line (a
 * claim renewed any number of times meanwhile is in it once). A standby's view of such a lease
 * is at most this much (plus the link's transit) behind the active's.
 */
export const RENEW_EVERY_MS = 250;

/**
 * A standby still receiving its snapshot reads a `ceil` only after the parts queued before it
 * (up to the unsent cap here, and the sockets' buffers on both sides): at millions of locks
 * that took longer than one ack timeout on a loaded host, and the standby was cut off mid-join
 * and started over, again and again (issue 29). It has this many ack timeouts. Tokens do not
 * wait meanwhile: the current block still has half its tokens when the next is reserved, and one
 * used up before the acknowledgement gives way to the blocking fallback, which waits for nobody.
 */
export const JOINING_ACK_TIMEOUTS = 10;

/** A standby this far behind (stopped reading: paused, or its host is swapping) is cut off; it re-syncs when it is back. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

interface Stream {
  readonly id: string;
  readonly link: StandbyLink;
  sentSeq: number;
  ackedSeq: number;
  /** The last ack received once the snapshot had all gone (null: none yet), for the reply gate. */
  syncedAck: number | null;
  /** [last seq of a batch, monotonic time it was sent], oldest first, unacked only. */
  readonly unacked: [number, number][];
  ceilingAcked: bigint;
  /** The snapshot still on its way; null once it has ended (the standby is then in sync). */
  walk: SnapshotWalk | null;
  /** When the snapshot was asked for, and how its slices went so far. */
  readonly walkStats: { startedAt: number; longestSliceMs: number; drainWaits: number };
}

interface CeilingWait {
  ceiling: bigint;
  resolve(): void;
  timer: NodeJS.Timeout;
}

/** How a streamed snapshot went, as the active saw it. */
export interface SnapshotSent {
  parts: number;
  /** From the request to the end line (ms). */
  ms: number;
  /** The longest slice: one turn of walking, encoding and sending (ms). */
  longestSliceMs: number;
  /** Times the walk waited for the standby's link to drain. */
  drainWaits: number;
}

export interface ReplicationSourceOptions {
  engine: LockEngine;
  clock: Clock;
  instanceId: string;
  /** A standby that has not acked a ceiling within this long is cut off (it re-syncs). */
  ackTimeoutMs: number;
  ceiling(): bigint;
  failovers(): FailoverView[];
  onStreamDropped(id: string, reason: string): void;
  /** A snapshot has all gone to standby `id` (for the log). */
  onSnapshotSent?(id: string, sent: SnapshotSent): void;
  /** How the next slice of a snapshot is run: setImmediate (client I/O goes first); tests drive it by hand. */
  schedule?: (slice: () => void) => void;
  walkBudget?: WalkBudget;
}

export class ReplicationSource {
  private seq = 0;
  private pending: unknown[][] = [];
  private scheduled = false;
  private readonly streams = new Map<string, Stream>();
  private readonly ceilingWaits = new Set<CeilingWait>();
  private unsubscribe: (() => void) | null = null;
  private readonly flushSoon = (): void => this.flush();
  private renewTimer: NodeJS.Timeout | null = null;
  /** Renewals go with a stream position of their own (the etcd mode's reply gate: an ack covers them). */
  private renewalsNumbered = false;
  /** Told of every ack of a standby that has had all of its snapshot (the reply gate and in-sync keeper). */
  private ackListener: ((id: string, seq: number) => void) | null = null;

  private readonly schedule: (slice: () => void) => void;

  constructor(private readonly o: ReplicationSourceOptions) {
    this.schedule = o.schedule ?? ((slice) => setImmediate(slice));
  }

  /** Starts numbering and shipping events (the node just became active). */
  start(): void {
    this.unsubscribe ??= this.o.engine.subscribe((e) => this.onEvent(e));
  }

  /** The node is no longer active: streams end; standbys re-sync from whoever is. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.pending = [];
    this.streams.clear();
    this.renewalsWanted();
    for (const wait of this.ceilingWaits) this.settle(wait);
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Whether `id` is streamed to and has had all of its snapshot (a handoff target). */
  streaming(id: string): boolean {
    return this.streams.get(id)?.walk === null;
  }

  /**
   * A standby asked for the state: `snapshot-begin` goes now, the table follows a slice per turn
   * (see snapshot-walk.ts), and `snapshot` ends it. The event stream to it starts at once, on the
   * same link, so events and parts reach it in the order they happened here. A second request
   * from the same standby starts a new snapshot (the old walk stops at its next slice).
   */
  addStandby(id: string, link: StandbyLink): void {
    this.flush();
    link.send({
      t: 'snapshot-begin',
      instance: this.o.instanceId,
      seq: this.seq,
      ceiling: this.o.ceiling().toString(),
      highWater: this.o.engine.tokenHighWater.toString(),
      locks: this.o.engine.lockCount,
    });
    const walk = new SnapshotWalk(this.o.engine, this.o.clock, (line) => link.sendRaw(line), this.o.walkBudget ?? DEFAULT_WALK_BUDGET);
    const s: Stream = {
      id,
      link,
      sentSeq: this.seq,
      ackedSeq: this.seq,
      syncedAck: null,
      unacked: [],
      ceilingAcked: 0n,
      walk,
      walkStats: { startedAt: this.o.clock.now(), longestSliceMs: 0, drainWaits: 0 },
    };
    this.streams.set(id, s);
    this.renewalsWanted();
    // A reservation waiting for acknowledgements now waits for this standby too: tell it.
    for (const wait of this.ceilingWaits) link.send({ t: 'ceil', ceiling: wait.ceiling.toString() });
    this.schedule(() => this.walkOn(s));
  }

  /** One slice of `s`'s snapshot, unless the stream is gone or replaced, or its link is full. */
  private walkOn(s: Stream): void {
    const walk = s.walk;
    if (walk === null || this.streams.get(s.id) !== s) return;
    const stats = s.walkStats;
    if (s.link.bufferedBytes() > MAX_UNSENT_SNAPSHOT_BYTES) {
      stats.drainWaits++;
      s.link.whenDrained(() => this.schedule(() => this.walkOn(s)));
      return;
    }
    const t0 = this.o.clock.now();
    // The events so far go first: the slice reads the table as they left it.
    this.flush();
    const done = walk.step();
    const t1 = this.o.clock.now();
    if (t1 - t0 > stats.longestSliceMs) stats.longestSliceMs = t1 - t0;
    if (!done) {
      this.schedule(() => this.walkOn(s));
      return;
    }
    s.walk = null;
    s.link.send({
      t: 'snapshot',
      instance: this.o.instanceId,
      seq: this.seq,
      ceiling: this.o.ceiling().toString(),
      highWater: this.o.engine.tokenHighWater.toString(),
      holders: [],
      waiters: [],
      failovers: this.o.failovers(),
      parts: walk.parts,
    });
    // Every resumable claim's lease as it stands now (a waiter's is not in its snapshot entry,
    // and a holder's was read when its lock was walked).
    const leases = renewLine(this.o.engine.resumableClaims(), t1);
    if (leases !== null) s.link.sendRaw(leases);
    this.o.onSnapshotSent?.(s.id, {
      parts: walk.parts,
      ms: Math.round(t1 - stats.startedAt),
      longestSliceMs: Math.round(stats.longestSliceMs * 100) / 100,
      drainWaits: stats.drainWaits,
    });
  }

  removeStandby(id: string): void {
    if (!this.streams.delete(id)) return;
    this.renewalsWanted();
    for (const wait of this.ceilingWaits) this.checkCeiling(wait);
  }

  onAck(id: string, seq: number): void {
    const s = this.streams.get(id);
    if (s === undefined) return;
    if (seq > s.ackedSeq) {
      s.ackedSeq = seq;
      while (s.unacked.length > 0 && (s.unacked[0] as [number, number])[0] <= seq) s.unacked.shift();
    }
    // A standby still receiving its snapshot has applied events on a partial table: it counts once
    // it has all of it. The ack of the snapshot's end counts even at the position the stream began at.
    if (s.walk !== null || (s.syncedAck !== null && seq <= s.syncedAck)) return;
    s.syncedAck = seq;
    if (this.ackListener !== null) this.ackListener(id, seq);
  }

  /**
   * Sets who hears of the acks of standbys in sync (the etcd mode's reply gate); null for nobody.
   * The listener hears at once of the last such ack of each standby (an idle stream sends no more).
   */
  onSyncedAck(listener: ((id: string, seq: number) => void) | null): void {
    this.ackListener = listener;
    if (listener === null) return;
    for (const s of this.streams.values()) if (s.walk === null && s.syncedAck !== null) listener(s.id, s.syncedAck);
  }

  /**
   * In the etcd mode every renewal line is followed by a batch with a position of its own (no
   * events when none are pending), so that a standby's ack of that position says it has the
   * renewals too: a heartbeat's answer waits for it like a grant's (reply-gate.ts). Off: renewals
   * are unnumbered, as in the peers mode.
   */
  numberRenewals(on: boolean): void {
    this.renewalsNumbered = on;
  }

  onCeilingAck(id: string, ceiling: bigint): void {
    const s = this.streams.get(id);
    if (s === undefined || ceiling <= s.ceilingAcked) return;
    s.ceilingAcked = ceiling;
    for (const wait of this.ceilingWaits) this.checkCeiling(wait);
  }

  /** Sends a new ceiling to every standby without waiting (the blocking fallback reservation). */
  broadcastCeiling(ceiling: bigint): void {
    for (const s of this.streams.values()) s.link.send({ t: 'ceil', ceiling: ceiling.toString() });
  }

  /**
   * Resolves once every standby streaming now has stored `ceiling` (or is gone). A standby
   * that does not answer within ackTimeoutMs is cut off rather than holding up the tokens; one
   * still receiving its snapshot within JOINING_ACK_TIMEOUTS of them.
   */
  awaitCeiling(ceiling: bigint): Promise<void> {
    this.broadcastCeiling(ceiling);
    return new Promise<void>((resolve) => {
      const wait: CeilingWait = {
        ceiling,
        resolve,
        timer: setTimeout(() => this.ceilingTimedOut(wait, true), this.o.ackTimeoutMs),
      };
      this.ceilingWaits.add(wait);
      this.checkCeiling(wait);
    });
  }

  /** Cuts off the standbys that have not stored `wait.ceiling`: at the first timeout, those still joining get longer. */
  private ceilingTimedOut(wait: CeilingWait, first: boolean): void {
    let joining = false;
    for (const s of [...this.streams.values()]) {
      if (s.ceilingAcked >= wait.ceiling) continue;
      if (first && s.walk !== null) joining = true;
      else this.drop(s, 'did not acknowledge a token ceiling in time');
    }
    if (joining) wait.timer = setTimeout(() => this.ceilingTimedOut(wait, false), (JOINING_ACK_TIMEOUTS - 1) * this.o.ackTimeoutMs);
    else this.settle(wait);
  }

  broadcastFailover(f: FailoverView): void {
    for (const s of this.streams.values()) s.link.send({ t: 'failover', f });
  }

  lags(): Record<string, ReplicationLag> {
    const now = this.o.clock.now();
    const out: Record<string, ReplicationLag> = {};
    for (const s of this.streams.values()) {
      const oldest = s.unacked[0];
      out[s.id] = { events: s.sentSeq - s.ackedSeq, ms: oldest === undefined ? 0 : Math.round(now - oldest[1]) };
    }
    return out;
  }

  /** Ships what is pending now (a handoff sends its last events before the handoff message). */
  flush(): void {
    this.scheduled = false;
    if (this.renewalsNumbered) this.flushRenewals();
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    this.sendBatch(pending);
  }

  /** Writes one batch (ending at the current position) to every standby, now. */
  private sendBatch(events: unknown[][]): void {
    const line = `${JSON.stringify({ t: 'ev', seq: this.seq, e: events })}\n`;
    const now = this.o.clock.now();
    for (const s of [...this.streams.values()]) {
      if (s.link.bufferedBytes() > MAX_BUFFERED_BYTES) {
        this.drop(s, `more than ${MAX_BUFFERED_BYTES >> 20} MiB of replication unread`);
        continue;
      }
      s.link.sendRaw(line);
      // Now, not in a later turn: this runs before the client replies of this turn are written
      // (the flush scheduler's lead), so no client hears of a change before the standbys could.
      s.link.flushNow();
      s.sentSeq = this.seq;
      s.unacked.push([this.seq, now]);
    }
  }

  /**
   * Sends the renewals of resumable sessions since the last call, as one line (the timer does
   * this every RENEW_EVERY_MS; a handoff does it before its handoff message, so the successor
   * has every such lease as it stands).
   */
  flushRenewals(): void {
    const renewed = this.o.engine.takeRenewals();
    if (renewed.length === 0 || this.streams.size === 0) return;
    const line = renewLine(renewed, this.o.clock.now());
    if (line === null) return;
    if (this.renewalsNumbered) {
      // The events before the renewals go first, then the renewals, then the position that covers them.
      const pending = this.pending;
      this.pending = [];
      if (pending.length > 0) this.sendBatch(pending);
      for (const s of this.streams.values()) s.link.sendRaw(line);
      this.seq++;
      this.sendBatch([]);
      return;
    }
    for (const s of this.streams.values()) s.link.sendRaw(line);
  }

  /** Renewals are collected (and sent on a timer) only while some standby streams. */
  private renewalsWanted(): void {
    const wanted = this.streams.size > 0;
    this.o.engine.trackRenewals(wanted);
    if (wanted && this.renewTimer === null) {
      this.renewTimer = setInterval(() => this.flushRenewals(), RENEW_EVERY_MS);
      this.renewTimer.unref();
    } else if (!wanted && this.renewTimer !== null) {
      clearInterval(this.renewTimer);
      this.renewTimer = null;
    }
  }

  private onEvent(e: LockEvent): void {
    if (this.streams.size === 0) {
      // Nobody to ship to: the numbers still move, so a later snapshot starts at the right place.
      if (e.type !== 'reset') this.seq++;
      return;
    }
    const encoded = encodeEvent(e, this.o.engine);
    if (encoded === null) return;
    this.seq++;
    this.pending.push(encoded);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  private drop(s: Stream, reason: string): void {
    this.streams.delete(s.id);
    s.link.close(reason);
    this.o.onStreamDropped(s.id, reason);
  }

  private checkCeiling(wait: CeilingWait): void {
    for (const s of this.streams.values()) if (s.ceilingAcked < wait.ceiling) return;
    this.settle(wait);
  }

  private settle(wait: CeilingWait): void {
    if (!this.ceilingWaits.delete(wait)) return;
    clearTimeout(wait.timer);
    wait.resolve();
  }
}

/**
 * One `renew` line for the live claims among `claims`, or null when there are none. The lease
 * left is rounded down, so a standby never counts more of it than the active has.
 */
function renewLine(claims: Iterable<Claim>, now: number): string | null {
  let line = '{"t":"renew","r":[';
  let n = 0;
  for (const c of claims) {
    if (c.state === 'ended') continue;
    line += `${n++ === 0 ? '' : ','}${c.id},${Math.max(0, Math.floor(c.expiresAt - now))}`;
  }
  return n === 0 ? null : `${line}]}\n`;
}

/**
 * The replicated form of one event; see replication-sink.ts for the reading side. A resumable
 * session's grant and enqueue carry its key hash (and the enqueue its lease), looked up by claim
 * id: the engine's events never carry the hash, so it never reaches the feed or the dashboard.
 */
function encodeEvent(e: LockEvent, engine: LockEngine): unknown[] | null {
  switch (e.type) {
    case 'grant': {
      // The lease was granted just now: all of it remains (the standby counts from when it reads this).
      const g = ['g', e.lock, e.claimId, e.token.toString(), e.protocol, e.client, e.leaseMs, e.sliding, e.handoverMs, e.handoverCause];
      // Then [keyHash], or [keyHash or null, clientName] (replication-sink.ts reads them).
      const hash = e.protocol === 'session' ? (engine.resumableClaim(e.claimId)?.keyHash ?? null) : null;
      if (e.clientName !== null) g.push(hash, e.clientName);
      else if (hash !== null) g.push(hash);
      return g;
    }
    case 'release':
      return ['r', e.lock, e.claimId, e.cause];
    case 'expire':
      return ['x', e.lock, e.claimId];
    case 'force-release':
      return ['f', e.lock, e.claimId];
    case 'enqueue': {
      const q = ['q', e.lock, e.claimId, e.protocol, e.client, e.waitDeadline === null ? null : Math.max(0, e.waitDeadline - e.at)];
      const claim = e.protocol === 'session' ? engine.resumableClaim(e.claimId) : undefined;
      const hash = claim?.keyHash ?? null;
      // Then [leaseMs, keyHash], or [leaseMs or 0, keyHash or null, clientName].
      if (e.clientName !== null) q.push(hash === null ? 0 : (claim?.leaseMs ?? 0), hash, e.clientName);
      else if (hash !== null) q.push(claim?.leaseMs ?? 0, hash);
      return q;
    }
    case 'leave-queue':
      return ['l', e.lock, e.claimId, e.reason];
    case 'kick':
      return ['k', e.lock, e.claimId];
    default:
      return null;
  }
}
