// A LineTransport with no socket under it, for unit tests of the line protocols: the test plays
// the peer (bytes in, FIN, reset, the close that follows) and reads back every write. Writes
// complete (their callbacks run) only when the test says so, so it can stand a grant between
// being written and having left the process.
import { FakeClock } from '../../lib/engine/clock.ts';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import type { ConnectionContext, LineConnection, Misbehaviour } from '../lines/line-connection.ts';
import type { LineTransport, TransportSink } from '../lines/line-transport.ts';

export class MemoryTransport implements LineTransport {
  bufferedBytes = 0;
  ended = false;
  destroyed = false;
  readingPaused = false;
  /** Each write() as it was handed over, in order. */
  readonly writes: string[] = [];
  private sink: TransportSink | null = null;
  /** Byte counts of the writes not completed yet, oldest first. */
  private readonly unconfirmed: number[] = [];

  constructor(readonly remoteAddress = '10.0.0.9:4242') {}

  attach(sink: TransportSink): void {
    if (this.sink !== null) throw new Error('a transport has one connection');
    this.sink = sink;
  }

  write(text: string): boolean {
    if (this.ended || this.destroyed) throw new Error('write after end');
    const bytes = Buffer.byteLength(text);
    this.writes.push(text);
    this.unconfirmed.push(bytes);
    this.bufferedBytes += bytes;
    return true;
  }

  end(): void {
    this.ended = true;
  }

  destroy(): void {
    this.destroyed = true;
  }

  pauseReading(): void {
    this.readingPaused = true;
  }

  resumeReading(): void {
    this.readingPaused = false;
  }

  // --- the peer's side ---

  /** Everything written so far, as the peer would read it. */
  get output(): string {
    return this.writes.join('');
  }

  /** The lines written so far, without their line endings. */
  lines(): string[] {
    const out = this.output;
    return out === '' ? [] : out.slice(0, out.endsWith('\n') ? -1 : undefined).split('\n');
  }

  /** The peer sends `text` as one chunk. */
  send(text: string): void {
    this.peer().onBytes(Buffer.from(text, 'utf8'));
  }

  /** Every write so far has left the process: the connection hears of each, oldest first. */
  completeWrites(): void {
    for (let bytes = this.unconfirmed.shift(); bytes !== undefined; bytes = this.unconfirmed.shift()) {
      this.bufferedBytes -= bytes;
      this.peer().onWritten();
    }
  }

  /** The peer's FIN. */
  peerEnds(): void {
    this.peer().onPeerEnd();
  }

  /** The connection is gone (after our end, the peer's, or a reset): what was not written is lost. */
  closes(): void {
    this.unconfirmed.length = 0;
    this.bufferedBytes = 0;
    this.destroyed = true;
    this.peer().onClosed();
  }

  /** A reset (ECONNRESET): the failure, then the close. */
  resets(): void {
    this.peer().onFailed();
    this.closes();
  }

  private peer(): TransportSink {
    if (this.sink === null) throw new Error('no connection attached');
    return this.sink;
  }
}

/** A ConnectionContext on a FakeClock, recording what the connection reported and when it was gone. */
export function memoryContext(clock = new FakeClock()) {
  const reports: Misbehaviour[] = [];
  const gone: LineConnection[] = [];
  const flusher = new FlushScheduler();
  const ctx: ConnectionContext = {
    clock,
    flusher,
    afterInput: () => {},
    onGone: (conn) => gone.push(conn),
    report: (_conn, what) => reports.push(what),
  };
  return { ctx, clock, flusher, reports, gone };
}
