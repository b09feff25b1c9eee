// The node:net transport of a line connection: a thin shell over one accepted Socket. Whatever
// a connection decides (batching, backpressure, closing) stays in line-connection.ts; this file
// only maps the socket's calls and events onto LineTransport.
import type { Socket } from 'node:net';
import type { LineTransport, TransportSink } from './line-transport.ts';

export class SocketTransport implements LineTransport {
  readonly remoteAddress: string;
  private sink: TransportSink | null = null;
  /** The callback of a write queued behind another: made the first time one is (rare), then kept. */
  private queuedDone: ((err?: Error | null) => void) | null = null;

  constructor(private readonly socket: Socket) {
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    // Replies are batched per event-loop turn already (flush-scheduler.ts); Nagle would only delay them.
    socket.setNoDelay(true);
  }

  get bufferedBytes(): number {
    return this.socket.writableLength;
  }

  get ended(): boolean {
    return this.socket.writableEnded;
  }

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  get readingPaused(): boolean {
    return this.socket.isPaused();
  }

  /** One listener per event, made once per connection. */
  attach(sink: TransportSink): void {
    const socket = this.socket;
    this.sink = sink;
    socket.on('data', (chunk: Buffer) => sink.onBytes(chunk));
    socket.on('drain', () => sink.onDrain());
    // A reset peer is ordinary here; 'close' follows later in the loop and does the clean-up.
    socket.on('error', () => sink.onFailed());
    // The listener runs with allowHalfOpen, so Node does not end our side at the peer's FIN
    // before the connection has flushed its replies.
    socket.on('end', () => sink.onPeerEnd());
    socket.on('close', () => sink.onClosed());
  }

  write(text: string): boolean {
    const socket = this.socket;
    const sink = this.sink;
    if (sink === null) throw new Error('socket transport: write before attach');
    // Nothing queued in Node: this write goes to the kernel now, or becomes the write in flight,
    // which counts as gone out even if the socket is destroyed under it (line-connection.ts).
    // Either way it is done here, without a write callback and its tick per write. Behind a
    // write in flight it is queued, and only its callback can say whether it ever left.
    if (socket.writableLength === 0) {
      const ok = socket.write(text);
      sink.onWritten();
      return ok;
    }
    this.queuedDone ??= (err) => sink.onWritten(err);
    return socket.write(text, this.queuedDone);
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  pauseReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }
}
