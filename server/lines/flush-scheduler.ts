// Batches socket writes: replies are appended to their connection's string buffer, and one
// pass per event-loop turn (setImmediate, after all reads of that turn) writes each dirty
// connection once. Pipelined requests then cost one write syscall per connection per turn.
//
// In a cluster the pass first writes the replication stream (the lead): the bytes telling the
// standbys of a grant or a release are in the kernel before any client hears of it, so a crash
// of this process (kill -9) cannot lose a change a client was told of. What the kernel holds is
// still delivered after the process dies; what a congested link holds in user space is not.
//
// In the etcd coordination mode a gate is attached while this node is active (reply-gate.ts):
// the pass then hands the dirty connections to it instead of writing them, and the gate cuts
// each one's output for this turn and writes it once every in-sync standby has acked the lead.
// Without a gate (peers mode) the pass is what it always was, plus one null check.

export interface Flushable {
  /** Writes the output queued so far. */
  flush(): void;
  /** Takes the output queued so far out of the buffer, unwritten ('' when none or closed): the gate holds it. */
  cut(): string;
  /** Writes output cut earlier that the gate released (in the order it was cut). */
  writeCut(data: string): void;
  /** Output cut earlier will never be written (the node stepped out): the connection closes without it. */
  abandon(): void;
  /** Ends the transport's sending side (after a close, once its output is written). */
  endTransport(): void;
  readonly closed: boolean;
}

/** What holds replies back (server/coordination/reply-gate.ts implements it). */
export interface TurnGate {
  /** The connections with output this turn, after the lead was written. */
  holdTurn(connections: Flushable[]): void;
  /** Calls conn.endTransport() once every cut held for `conn` has been written or dropped (at once when none). */
  endAfterHeld(conn: Flushable): void;
  /** `conn` is gone: its held output is dropped. */
  forget(conn: Flushable): void;
}

export class FlushScheduler {
  private dirty: Flushable[] = [];
  private scheduled = false;
  private lead: (() => void) | null = null;
  private gate: TurnGate | null = null;
  private readonly run = (): void => this.flushAll();

  /** Sets what is written before every pass (the replication stream); null for none. */
  setLead(lead: (() => void) | null): void {
    this.lead = lead;
  }

  /** Sets what holds each pass's output (reply-gate.ts, while active in the etcd mode); null for none. */
  setGate(gate: TurnGate | null): void {
    this.gate = gate;
  }

  /** Writes the lead now: for a connection that writes outside the pass (one that is closing). */
  flushLead(): void {
    if (this.lead !== null) this.lead();
  }

  mark(conn: Flushable): void {
    this.dirty.push(conn);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  flushAll(): void {
    this.scheduled = false;
    if (this.lead !== null) this.lead();
    const batch = this.dirty;
    this.dirty = [];
    if (this.gate !== null) this.gate.holdTurn(batch);
    else for (const connection of batch) connection.flush();
  }

  /** A connection writes outside a pass (it is closing): now, or behind the gate after the lead. */
  flushOne(conn: Flushable): void {
    if (this.gate === null) {
      conn.flush();
      return;
    }
    if (this.lead !== null) this.lead();
    this.gate.holdTurn([conn]);
  }

  /** Ends `conn`'s transport now, or once the gate has written or dropped what it holds for it. */
  endAfterHeld(conn: Flushable): void {
    if (this.gate === null) conn.endTransport();
    else this.gate.endAfterHeld(conn);
  }

  /** `conn` is gone. */
  forget(conn: Flushable): void {
    if (this.gate !== null) this.gate.forget(conn);
  }

  /** The connections marked since the last pass (a gate detaching holds or drops their output). */
  takeDirty(): Flushable[] {
    const batch = this.dirty;
    this.dirty = [];
    return batch;
  }
}
