// The seam between a line connection (line-connection.ts and the protocols on it) and the bytes
// it speaks over. A connection owns one transport and is its only sink: the transport calls the
// connection's methods directly, so no closure or event object is made per chunk or per request.
// socket-transport.ts is the node:net one; tests drive a protocol through an in-memory one
// (server/testing/memory-transport.ts) without a socket.

/** What a transport tells its connection. The connection implements it itself. */
export interface TransportSink {
  /** Bytes from the peer, in order. */
  onBytes(chunk: Buffer): void;
  /** The output that made write() return false has gone out: writing may go on. */
  onDrain(): void;
  /** The transport failed (a reset, not the peer's FIN); onClosed follows. */
  onFailed(): void;
  /** The peer's FIN: it will send nothing more, and may still read what we write. */
  onPeerEnd(): void;
  /** The transport is gone; nothing more comes, nothing more goes out. */
  onClosed(): void;
  /**
   * The oldest write not yet reported has left this process (`err` set when it never will):
   * once per write(), in order. A method of the sink, not a callback per write or per
   * connection: a closure per connection was 1.2 % of a session's CPU (tsx names each one).
   */
  onWritten(err?: Error | null): void;
}

export interface LineTransport {
  /** The peer, for logs and for claims ("127.0.0.1:53122"). */
  readonly remoteAddress: string;
  /** Output handed to write() that has not left this process yet, in bytes. */
  readonly bufferedBytes: number;
  /** end() was called: nothing more may be written. */
  readonly ended: boolean;
  readonly destroyed: boolean;
  /** Reading is paused (pauseReading), so no onBytes comes until resumeReading. */
  readonly readingPaused: boolean;
  /** Starts telling `sink` what happens; called once, by the connection that owns the transport. */
  attach(sink: TransportSink): void;
  /**
   * Hands `text` on; the sink's onWritten runs once it has left this process. False when the
   * transport is buffering past its own mark: onDrain says when that is over.
   */
  write(text: string): boolean;
  /** Ends our side once what was written has gone out. */
  end(): void;
  /** Closes at once; what is still buffered is dropped. */
  destroy(): void;
  pauseReading(): void;
  resumeReading(): void;
}
