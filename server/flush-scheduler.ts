// Batches socket writes: replies are appended to their connection's string buffer, and one
// pass per event-loop turn (setImmediate, after all reads of that turn) writes each dirty
// connection once. Pipelined requests then cost one write syscall per connection per turn.

export interface Flushable {
  flush(): void;
}

export class FlushScheduler {
  private dirty: Flushable[] = [];
  private scheduled = false;
  private readonly run = (): void => this.flushAll();

  mark(conn: Flushable): void {
    this.dirty.push(conn);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  flushAll(): void {
    this.scheduled = false;
    const batch = this.dirty;
    this.dirty = [];
    for (let i = 0; i < batch.length; i++) (batch[i] as Flushable).flush();
  }
}
