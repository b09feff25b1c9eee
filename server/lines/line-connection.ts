// What both wire protocols share about one connection: line splitting, batched writes,
// backpressure, and the io-timeout bookkeeping that the watchdog reads. Subclasses add the
// protocol (keyed-connection.ts, session-connection.ts). The bytes go over a LineTransport
// (line-transport.ts): a TCP socket in the server, an in-memory one in unit tests.
import { LineSplitter, type LineSink } from '../../lib/protocol/line-splitter.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { FlushScheduler } from './flush-scheduler.ts';
import type { LineTransport, TransportSink } from './line-transport.ts';
import type { Route } from './routing.ts';

/** Output longer than this (in UTF-16 units) is written in pieces of at most this size. */
const WRITE_PIECE = 64 * 1024;
/** Past this many buffered output bytes we stop reading from the client until it drains. */
const HIGH_WATER = 1 << 20;

/** Ways a peer ends its own connection, each logged with its own line. */
export type Misbehaviour = 'line-too-long' | 'io-timeout' | 'stuck-reader' | 'half-open';

export interface ConnectionContext {
  readonly clock: Clock;
  readonly flusher: FlushScheduler;
  /** Called after each chunk of input has been handled (wakes the engine timer). */
  afterInput(): void;
  /** Called once when the connection is gone. */
  onGone(conn: LineConnection): void;
  /** A peer broke a rule and is being cut off (for the log; not on any hot path). */
  report(conn: LineConnection, what: Misbehaviour): void;
}

export abstract class LineConnection implements LineSink, TransportSink {
  readonly address: string;
  readonly connectedAt: number;
  /** Engine-clock time the unfinished input line started, or 0. */
  partialSince = 0;
  /** Engine-clock time we stopped reading for a hold (routing.ts), or 0 while reading. */
  heldSince = 0;
  /** When reading last (re)started: the connect, or the end of a hold. */
  protected readingSince: number;
  /** What every client line gets while the listener redirects, else null (one check per line). */
  protected redirectLine: string | null = null;
  /** Engine-clock time a write started waiting for the peer to read, or 0. */
  writeBlockedSince = 0;
  /** Set when we decided to close; the socket may still be flushing. */
  closing = false;
  /** Engine-clock time close() was called, or 0; a peer that never finishes closing is destroyed. */
  private closingSince = 0;
  closed = false;
  /** The transport failed (ECONNRESET...) rather than being closed by a FIN from the peer. */
  protected reset = false;
  private out = '';
  // Output positions are counted in string units (UTF-16), not bytes: they only locate replies
  // relative to the writes that carried them, and a string's length costs nothing to read.
  /** Units handed to transport.write so far. */
  private handedUnits = 0;
  /** Units whose write completed. */
  private confirmedUnits = 0;
  /** Units cut from `out` and held by the reply gate (etcd mode), not yet handed to transport.write. */
  private heldUnits = 0;
  /** Sizes of the writes not yet completed, oldest first. */
  private readonly inflight: number[] = [];
  private readonly splitter: LineSplitter;

  constructor(
    protected readonly transport: LineTransport,
    protected readonly ctx: ConnectionContext,
  ) {
    this.address = transport.remoteAddress;
    this.connectedAt = ctx.clock.now();
    this.readingSince = this.connectedAt;
    this.splitter = new LineSplitter(this);
    transport.attach(this);
  }

  abstract onLine(buf: Buffer, start: number, end: number, text: string): void;
  abstract onOverflow(): void;
  /**
   * Ends the claims the connection still has in the engine: only those waiting in a queue when
   * `waitingOnly`, else all. Must be idempotent.
   */
  protected abstract releaseClaims(waitingOnly?: boolean): void;
  /**
   * A write completed: the first `confirmed` units of our output left this process. (Node
   * also completes the write in flight when the socket is destroyed, so that one counts as gone
   * out: when in doubt a reply counts as delivered, the safe side for a grant.)
   */
  protected afterWrite(_confirmed: number): void {}
  /**
   * The connection is gone: output past `confirmed` units never left this process (it was in our
   * buffer, or queued in Node behind the write in flight).
   */
  protected discardUnwritten(_confirmed: number): void {}

  /** Where the output queued so far ends, in units from the start of the connection. */
  protected get queuedEnd(): number {
    return this.handedUnits + this.heldUnits + this.out.length;
  }
  /** Input arrived (any bytes): sessions treat it as a sign of life. */
  protected onActivity(): void {}
  /** A line was started and not finished within the io-timeout (or a first line never came). */
  protected abstract onIoTimeout(): void;
  /** The protocol's "server going away" line: the goodbye at shutdown and of a hold that lasted too long. */
  abstract goodbye(): string;
  /**
   * The listener now redirects (`fresh`: this connection was just accepted). Sets redirectLine;
   * true when the connection must close with it (closeRedirected) once every connection has been
   * told, having first stopped taking grants and dropped its waiters without a word (the engine
   * reset before a switch ended them; clients re-send at the new address).
   */
  protected abstract redirect(route: Extract<Route, { kind: 'redirect' }>, fresh: boolean): boolean;

  /** The listener's route changed, or a connection was accepted on a listener not serving. */
  applyRoute(route: Route, now: number, fresh: boolean): boolean {
    if (this.closing) return false;
    this.redirectLine = null;
    if (route.kind === 'hold') {
      if (this.heldSince === 0) {
        this.heldSince = now;
        this.transport.pauseReading();
      }
      return false;
    }
    // Bytes that came during the hold are read now: served in order, or drained before a close.
    if (this.heldSince !== 0) this.resumeReading(now);
    return route.kind === 'redirect' && this.redirect(route, fresh);
  }

  /** Step two of a switch to redirect: the line after anything queued, then a graceful close. */
  closeRedirected(): void {
    this.close(this.redirectLine ?? undefined);
  }

  private resumeReading(now: number): void {
    this.heldSince = 0;
    this.readingSince = now;
    // A line half-sent before the hold gets a full io-timeout again: we were the ones not reading.
    if (this.partialSince !== 0) this.partialSince = now;
    // Past the high-water mark the drain resumes reading, as it would without a hold.
    if (this.transport.bufferedBytes <= HIGH_WATER) this.transport.resumeReading();
  }

  /**
   * Called by the listener's watchdog. A half-sent line past the io-timeout ends the
   * connection politely; a peer that has not read our output within it is cut off at once.
   */
  checkIo(now: number, ioTimeoutMs: number, holdMaxMs: number): void {
    if (this.closed) return;
    if (this.writeBlockedSince !== 0 && now - this.writeBlockedSince > ioTimeoutMs) {
      this.ctx.report(this, 'stuck-reader');
      this.destroy();
    } else if (this.heldSince !== 0) {
      // Held, the client's silence is ours: only the hold's own bound applies, then the goodbye
      // of a shutdown (waiters leave first, as at closeAll).
      if (now - this.heldSince > holdMaxMs) {
        this.beginClose();
        this.close(this.goodbye());
      }
    } else if (this.closingSince !== 0 && now - this.closingSince > ioTimeoutMs) {
      this.ctx.report(this, 'half-open'); // we said goodbye; the peer never closed its side
      this.destroy();
    } else if (!this.closing && ((this.partialSince !== 0 && now - this.partialSince > ioTimeoutMs) || this.idleTooLong(now, ioTimeoutMs))) {
      this.ctx.report(this, 'io-timeout');
      this.onIoTimeout();
    }
  }

  /** Protocol-specific silence rule (the session's first ACQUIRE); none by default. */
  protected idleTooLong(_now: number, _ioTimeoutMs: number): boolean {
    return false;
  }

  /** Queues a reply; it goes out with this turn's batch. */
  send(line: string): void {
    if (this.closed) return;
    if (this.out.length === 0) this.ctx.flusher.mark(this);
    this.out += line;
  }

  flush(): void {
    if (this.out.length === 0 || this.closed || this.transport.ended) return;
    const data = this.out;
    this.out = '';
    this.write(data);
  }

  /** Flushable: this turn's output, taken for the reply gate (etcd mode). */
  cut(): string {
    if (this.out.length === 0 || this.closed || this.transport.ended) return '';
    const data = this.out;
    this.out = '';
    this.heldUnits += data.length;
    // Held output counts toward the high-water mark as buffered output does: a client that
    // pipelines while its replies wait stops being read.
    if (this.heldUnits > HIGH_WATER && !this.transport.readingPaused) this.transport.pauseReading();
    return data;
  }

  /** Flushable: output cut earlier, released by the reply gate. */
  writeCut(data: string): void {
    this.heldUnits -= data.length;
    if (this.closed || this.transport.ended) return;
    this.write(data);
    const paused = this.transport.readingPaused && !this.closing && this.heldSince === 0;
    if (paused && this.writeBlockedSince === 0 && this.heldUnits <= HIGH_WATER && this.transport.bufferedBytes <= HIGH_WATER) this.transport.resumeReading();
  }

  /** Flushable: output held for this connection will never be written; the client sees the connection close. */
  abandon(): void {
    this.destroy();
  }

  /** Flushable: ends our side once what was written has gone out (called now, or by the reply gate once it holds nothing for us). */
  endTransport(): void {
    this.transport.end();
  }

  private write(data: string): void {
    if (this.transport.destroyed) {
      this.discardUnwritten(this.confirmedUnits);
      return;
    }
    let ok: boolean;
    if (data.length <= WRITE_PIECE) {
      ok = this.writePiece(data);
    } else {
      // Large output goes in pieces that each complete on their own, so that when the peer
      // stops reading we still know, to a piece, which replies never left this process.
      ok = true;
      for (let at = 0; at < data.length; ) {
        let end = Math.min(data.length, at + WRITE_PIECE);
        if (end < data.length) {
          // Cut after the last whole line in the piece, when it has one.
          const newline = data.lastIndexOf('\n', end - 1);
          if (newline >= at) end = newline + 1;
        }
        const piece = data.slice(at, end);
        ok = this.writePiece(piece);
        at = end;
      }
    }
    if (!ok && this.writeBlockedSince === 0) this.writeBlockedSince = this.ctx.clock.now();
    if (this.transport.bufferedBytes > HIGH_WATER && !this.transport.readingPaused) this.transport.pauseReading();
  }

  private writePiece(piece: string): boolean {
    this.inflight.push(piece.length);
    this.handedUnits += piece.length;
    return this.transport.write(piece);
  }

  /** Sends a last line (if any), then closes. Claims are ended at once, not when the socket finally goes. */
  close(lastLine?: string): void {
    if (this.closingSince !== 0 || this.closed) return;
    this.closing = true;
    this.closingSince = this.ctx.clock.now();
    // A held connection reads again to close: its input drains, so its FIN is seen, not reset.
    if (this.heldSince !== 0) this.resumeReading(this.closingSince);
    this.splitter.stop();
    if (lastLine) this.send(lastLine);
    this.ctx.flusher.flushLead();
    this.ctx.flusher.flushOne(this);
    this.releaseClaims();
    this.ctx.flusher.endAfterHeld(this);
    // A peer that never reads cannot hold the socket open: the watchdog destroys it.
    if (this.writeBlockedSince === 0 && this.transport.bufferedBytes > 0) this.writeBlockedSince = this.ctx.clock.now();
  }

  /**
   * First step of closing many connections at once (shutdown): from now on no grant is
   * delivered here, and the waiting claims leave their queues, so that closing the holders
   * afterwards does not hand locks down queues that are about to close too.
   */
  beginClose(): void {
    this.closing = true;
    this.splitter.stop();
    this.releaseClaims(true);
  }

  /** Closes at once without a goodbye (stuck peer, shutdown deadline). */
  destroy(): void {
    this.closing = true;
    this.splitter.stop();
    this.releaseClaims();
    this.transport.destroy();
  }

  // --- TransportSink: called by the transport only ---

  onBytes(chunk: Buffer): void {
    if (this.closing) return;
    this.onActivity();
    this.splitter.push(chunk);
    if (this.splitter.hasPartial) {
      if (this.splitter.startedPartial || this.partialSince === 0) this.partialSince = this.ctx.clock.now();
    } else {
      this.partialSince = 0;
    }
    this.ctx.afterInput();
  }

  /** TransportSink: the oldest write in flight left this process, or never will (`err`). */
  onWritten(err?: Error | null): void {
    const n = this.inflight.shift() ?? 0;
    if (err) return;
    this.confirmedUnits += n;
    this.afterWrite(this.confirmedUnits);
  }

  onDrain(): void {
    this.writeBlockedSince = 0;
    if (this.transport.readingPaused && !this.closing && this.heldSince === 0) this.transport.resumeReading();
  }

  /** A reset is ordinary. onClosed follows and does the clean-up; until then nothing more may be handed here. */
  onFailed(): void {
    this.closing = true;
    this.reset = true;
  }

  /**
   * The peer will send nothing more. Replies already made still go out; then we end our side,
   * and release now rather than a round trip later at onClosed.
   */
  onPeerEnd(): void {
    if (this.closed) return;
    this.closing = true;
    this.splitter.stop();
    // Claims first: ending waiters may release replies held behind them, which go out too.
    this.releaseClaims();
    this.ctx.flusher.flushOne(this);
    this.ctx.flusher.endAfterHeld(this);
    this.ctx.afterInput();
  }

  onClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing = true;
    this.out = '';
    this.ctx.flusher.forget(this);
    this.discardUnwritten(this.confirmedUnits);
    this.releaseClaims();
    this.ctx.afterInput();
    this.ctx.onGone(this);
  }
}
