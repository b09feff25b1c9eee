// The active side of replication: for each standby that asked (`sync`), a snapshot of the lock
// table, then every engine event in order, batched per event-loop turn and encoded once for
// all standbys. Standbys ack each batch; the acks give the lag (events and ms) and let the
// token reservation wait until every connected standby has stored a new ceiling.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { Claim } from '../../lib/engine/claim.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { FailoverView, ReplicationLag, SnapshotHolder, SnapshotWaiter } from '../../lib/cluster/peer-messages.ts';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';

/** What the source needs of a standby's link (a PeerLink; a recorder in tests). */
export interface StandbyLink {
  send(message: PeerMessage): void;
  sendRaw(line: string): void;
  close(reason: string): void;
  /** Bytes written but not yet taken by the kernel (a standby that stopped reading). */
  bufferedBytes(): number;
}

/** The size a snapshot part is cut at (characters of JSON; a part ends with the entry that passes it). */
export const SNAPSHOT_PART_CHARS = 1024 * 1024;

/**
 * How often the renewals of resumable sessions go to the standbys, in one coalesced line (a
 * claim renewed any number of times meanwhile is in it once). A standby's view of such a lease
 * is at most this much (plus the link's transit) behind the active's.
 */
export const RENEW_EVERY_MS = 250;

/** A standby this far behind (stopped reading: paused, or its host is swapping) is cut off; it re-syncs when it is back. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

interface Stream {
  readonly id: string;
  readonly link: StandbyLink;
  sentSeq: number;
  ackedSeq: number;
  /** [last seq of a batch, monotonic time it was sent], oldest first, unacked only. */
  readonly unacked: [number, number][];
  ceilingAcked: bigint;
}

interface CeilingWait {
  ceiling: bigint;
  resolve(): void;
  timer: NodeJS.Timeout;
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

  constructor(private readonly o: ReplicationSourceOptions) {}

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

  streaming(id: string): boolean {
    return this.streams.has(id);
  }

  /**
   * A standby asked for the state: the snapshot goes now, in parts of about SNAPSHOT_PART_CHARS
   * (all holders, then all waiters in queue order, as one list would have them), then its end;
   * the stream follows it on the same link.
   */
  addStandby(id: string, link: StandbyLink): void {
    this.flush();
    const now = this.o.clock.now();
    const parts = new SnapshotParts(link);
    for (const lock of this.o.engine.allLocks()) {
      const h = lock.holder;
      if (h === null) continue;
      const holder: SnapshotHolder = [lock.name, h.id, h.token.toString(), h.protocol, h.client, h.leaseMs, h.sliding, Math.max(0, h.expiresAt - now), Math.max(0, now - h.grantedAt)];
      if (h.keyHash !== null) holder.push(h.keyHash);
      parts.add('h', JSON.stringify(holder));
    }
    for (const lock of this.o.engine.allLocks()) {
      for (let w = lock.head; w !== null; w = w.next) {
        const remaining = w.waitDeadline === Number.POSITIVE_INFINITY ? null : Math.max(0, w.waitDeadline - now);
        const waiter: SnapshotWaiter = [lock.name, w.id, w.protocol, w.client, w.leaseMs, w.sliding, Math.max(0, now - w.enqueuedAt), remaining];
        // A resumable waiter's lease left comes in the renewals line right after the snapshot.
        if (w.keyHash !== null) waiter.push(w.keyHash);
        parts.add('w', JSON.stringify(waiter));
      }
    }
    link.send({
      t: 'snapshot', instance: this.o.instanceId, seq: this.seq, ceiling: this.o.ceiling().toString(),
      highWater: this.o.engine.tokenHighWater.toString(), holders: [], waiters: [], failovers: this.o.failovers(), parts: parts.end(),
    });
    // Every resumable claim's lease as it stands (a waiter's is not in its snapshot entry).
    const leases = renewLine(this.o.engine.resumableClaims(), now);
    if (leases !== null) link.sendRaw(leases);
    this.streams.set(id, { id, link, sentSeq: this.seq, ackedSeq: this.seq, unacked: [], ceilingAcked: 0n });
    this.renewalsWanted();
    // A reservation waiting for acknowledgements now waits for this standby too: tell it.
    for (const wait of this.ceilingWaits) link.send({ t: 'ceil', ceiling: wait.ceiling.toString() });
  }

  removeStandby(id: string): void {
    if (!this.streams.delete(id)) return;
    this.renewalsWanted();
    for (const wait of this.ceilingWaits) this.checkCeiling(wait);
  }

  onAck(id: string, seq: number): void {
    const s = this.streams.get(id);
    if (s === undefined || seq <= s.ackedSeq) return;
    s.ackedSeq = seq;
    while (s.unacked.length > 0 && (s.unacked[0] as [number, number])[0] <= seq) s.unacked.shift();
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
   * that does not answer within ackTimeoutMs is cut off rather than holding up the tokens.
   */
  awaitCeiling(ceiling: bigint): Promise<void> {
    this.broadcastCeiling(ceiling);
    return new Promise<void>((resolve) => {
      const wait: CeilingWait = {
        ceiling, resolve,
        timer: setTimeout(() => {
          for (const s of [...this.streams.values()]) {
            if (s.ceilingAcked < ceiling) this.drop(s, 'did not acknowledge a token ceiling in time');
          }
          this.settle(wait);
        }, this.o.ackTimeoutMs),
      };
      this.ceilingWaits.add(wait);
      this.checkCeiling(wait);
    });
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
    if (this.pending.length === 0) return;
    const line = `${JSON.stringify({ t: 'ev', seq: this.seq, e: this.pending })}\n`;
    this.pending = [];
    const now = this.o.clock.now();
    for (const s of [...this.streams.values()]) {
      if (s.link.bufferedBytes() > MAX_BUFFERED_BYTES) {
        this.drop(s, `more than ${MAX_BUFFERED_BYTES >> 20} MiB of replication unread`);
        continue;
      }
      s.link.sendRaw(line);
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

/** Cuts a snapshot's entries (already JSON) into `snapshot-part` lines. */
class SnapshotParts {
  private holders: string[] = [];
  private waiters: string[] = [];
  private chars = 0;
  private sent = 0;

  constructor(private readonly link: StandbyLink) {}

  add(kind: 'h' | 'w', json: string): void {
    (kind === 'h' ? this.holders : this.waiters).push(json);
    this.chars += json.length + 1;
    if (this.chars >= SNAPSHOT_PART_CHARS) this.cut();
  }

  /** Sends what is left; the number of parts sent. */
  end(): number {
    if (this.holders.length > 0 || this.waiters.length > 0) this.cut();
    return this.sent;
  }

  private cut(): void {
    this.link.sendRaw(`{"t":"snapshot-part","holders":[${this.holders.join(',')}],"waiters":[${this.waiters.join(',')}]}\n`);
    this.holders = [];
    this.waiters = [];
    this.chars = 0;
    this.sent++;
  }
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
      if (e.protocol === 'session') {
        const hash = engine.resumableClaim(e.claimId)?.keyHash;
        if (hash) g.push(hash);
      }
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
      if (claim?.keyHash) q.push(claim.leaseMs, claim.keyHash);
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
