// Batches socket writes: replies are appended to their connection's string buffer, and one
// pass per event-loop turn (setImmediate, after all reads of that turn) writes each dirty
// connection once. Pipelined requests then cost one write syscall per connection per turn.
//
// In a cluster the pass first writes the replication stream (the lead): the bytes telling the
// standbys of a grant or a release are in the kernel before any client hears of it, so a crash
// of this process (kill -9) cannot lose a change a client was told of. What the kernel holds is
// still delivered after the process dies; what a congested link holds in user space is not.

export interface Flushable {
  flush(): void;
}

export class FlushScheduler {
  private dirty: Flushable[] = [];
  private scheduled = false;
  private lead: (() => void) | null = null;
  private readonly run = (): void => this.flushAll();

  /** Sets what is written before every pass (the replication stream); null for none. */
  setLead(lead: (() => void) | null): void {
    this.lead = lead;
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
    for (const connection of batch) connection.flush();
  }
}
