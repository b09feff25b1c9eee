// Rule 6 of issue 32 (docs/cluster.md, "The reply rule"): in the etcd coordination mode the
// active writes a turn's replies only once every member of the in-sync set etcd stores has
// acked the replication stream up to that turn's last event. The flush scheduler hands each
// pass's dirty connections here (after writing the stream, its lead); each one's output so far is
// cut out of its buffer and held behind the stream's position (SyncGate, lib/coordination); the
// standbys' batch acks release the turns in order and each cut is written then. A later turn's
// replies are a later cut, so they never leave with an earlier turn's release.
//
// What is held and never written: the cuts of a connection that closed (dropped when it goes),
// and everything at deactivate() (this node steps out: it must not send an answer its successor
// may not know; those connections are closed, their clients retry elsewhere).
//
// This folder may not import server/lines: the connection and scheduler are described here by
// what the gate uses of them (FlushScheduler and LineConnection fit).
import { SyncGate } from '../../lib/coordination/sync-gate.ts';

/** A connection as the gate sees it (server/lines/flush-scheduler.ts Flushable). */
export interface GatedConnection {
  cut(): string;
  writeCut(data: string): void;
  abandon(): void;
  endTransport(): void;
  readonly closed: boolean;
}

/** The flush scheduler as the gate sees it. */
export interface GatedScheduler {
  setGate(gate: ReplyGate | null): void;
  takeDirty(): GatedConnection[];
}

/** The replication stream as the gate sees it (ReplicationSource). */
export interface GatedStream {
  /** The position of the last event written to the standbys (the lead has just written it). */
  readonly lastSeq: number;
  /** Renewals of resumable sessions go with a position of their own, so an ack covers them. */
  numberRenewals(on: boolean): void;
}

interface Cut {
  readonly conn: GatedConnection;
  data: string;
  /** Answered by the release being written now (set only when it answers more than one turn). */
  released: boolean;
}

interface ConnHeld {
  /** Its cuts still held, oldest first. */
  readonly cuts: Cut[];
  /** The connection is closing: end its transport once the last cut is written. */
  ending: boolean;
}

export class ReplyGate {
  private sync: SyncGate<Cut[]> | null = null;
  private scheduler: GatedScheduler | null = null;
  private readonly held = new Map<GatedConnection, ConnHeld>();

  constructor(private readonly stream: GatedStream) {}

  /** The scheduler whose passes this gate holds while active. */
  attach(scheduler: GatedScheduler): void {
    this.scheduler = scheduler;
  }

  /** This node is active with the in-sync set `members` stored in etcd: replies wait for them from now. */
  activate(members: Iterable<string>): void {
    this.deactivate();
    this.sync = new SyncGate(members);
    // Anything up to the stream's position now may have been answered already (the node may have
    // served a moment before this call): a standby joins only once it has all of it. (With the
    // empty set a new active starts with, this empty turn is answered at once.)
    if (this.sync.members.size === 0) this.sync.hold(BigInt(this.stream.lastSeq), []);
    this.stream.numberRenewals(true);
    this.scheduler?.setGate(this);
  }

  /**
   * This node is no longer active (or never answers again as such): everything held is dropped
   * and those connections close. Output queued this turn and not yet cut is dropped too: it was
   * made while active and nobody acked it.
   */
  deactivate(): void {
    if (this.sync === null) return;
    this.sync = null;
    this.scheduler?.setGate(null);
    this.stream.numberRenewals(false);
    const abandoned = new Set(this.held.keys());
    this.held.clear();
    for (const conn of this.scheduler?.takeDirty() ?? []) if (conn.cut() !== '') abandoned.add(conn);
    for (const conn of abandoned) conn.abandon();
  }

  get active(): boolean {
    return this.sync !== null;
  }

  /** Turns held, waiting for acks. */
  get waiting(): number {
    return this.sync?.waiting ?? 0;
  }

  /** Connections with output held. */
  get connectionsHeld(): number {
    return this.held.size;
  }

  /** The in-sync set in force (as stored in etcd). */
  get members(): ReadonlySet<string> {
    return this.sync?.members ?? new Set();
  }

  /** The highest stream position answered so far. */
  get answeredPosition(): bigint {
    return this.sync?.answeredPosition ?? 0n;
  }

  /** Standby `node` has applied the stream up to `seq` (its snapshot done): releases the turns it was the last to hold. */
  ack(node: string, seq: number): void {
    if (this.sync !== null) this.write(this.sync.ack(node, BigInt(seq)));
  }

  /** Whether `node` has applied everything answered so far (it may join the set). */
  mayJoin(node: string): boolean {
    return this.sync?.mayJoin(node) ?? false;
  }

  /** A new set is being written to etcd: replies wait for the old and the new members until stored. */
  propose(members: Iterable<string>): void {
    this.sync?.propose(members);
  }

  /** etcd stored `members` (or the write failed and the old set stays: pass it). */
  stored(members: Iterable<string>): void {
    if (this.sync !== null) this.write(this.sync.stored(members));
  }

  // --- TurnGate (server/lines/flush-scheduler.ts) ---

  holdTurn(connections: GatedConnection[]): void {
    const sync = this.sync;
    if (sync === null) return;
    // Nothing is allocated for a connection without output (nor a turn without any).
    let cuts: Cut[] | null = null;
    for (const conn of connections) {
      const data = conn.cut();
      if (data === '') continue;
      const cut: Cut = { conn, data, released: false };
      if (cuts === null) cuts = [cut];
      else cuts.push(cut);
      const h = this.held.get(conn);
      if (h === undefined) this.held.set(conn, { cuts: [cut], ending: false });
      else h.cuts.push(cut);
    }
    if (cuts !== null) this.write(sync.hold(BigInt(this.stream.lastSeq), cuts));
  }

  endAfterHeld(conn: GatedConnection): void {
    const h = this.held.get(conn);
    if (h === undefined) conn.endTransport();
    else h.ending = true;
  }

  forget(conn: GatedConnection): void {
    const h = this.held.get(conn);
    if (h === undefined) return;
    // The turns stay queued (others' cuts are in them); this connection's output goes now.
    for (const cut of h.cuts) cut.data = '';
    this.held.delete(conn);
  }

  // One write per connection however many of its turns a release answers (an ack that covers
  // several turns, as under pipelining when acks lag): a socket write, and the client's read, for
  // each turn would cost more than the gate itself.
  private write(turns: readonly Cut[][]): void {
    if (turns.length > 1) for (const turn of turns) for (const cut of turn) cut.released = true;
    for (const turn of turns) {
      for (const cut of turn) {
        const h = this.held.get(cut.conn);
        // Dropped (the connection went), or already written with an earlier cut of its connection.
        if (h === undefined || h.cuts[0] !== cut) continue;
        h.cuts.shift();
        let data = cut.data;
        while (h.cuts.length > 0 && (h.cuts[0] as Cut).released) data += (h.cuts.shift() as Cut).data;
        if (!cut.conn.closed) cut.conn.writeCut(data);
        if (h.cuts.length === 0) {
          this.held.delete(cut.conn);
          if (h.ending) cut.conn.endTransport();
        }
      }
    }
  }
}
