// The client's only socket code (the default LineConnector, line-connector.ts): one TCP
// connection per link, speaking newline-delimited lines.
// Writes made in one tick are joined and written once, so a burst of pipelined requests costs
// one syscall rather than one per request.
import net from 'node:net';
import { errorWithText } from './client-errors.ts';
import { formatAddress } from '../protocol/address-text.ts';
import type { Address } from '../protocol/address-text.ts';
import type { LineConnector, LineHandlers, LineLink } from './line-connector.ts';

/** Server lines are short; a longer unterminated run means we are not talking to Baton. */
const MAX_LINE_CHARS = 64 * 1024;
/** TCP keepalive, so a peer that vanished without a FIN is noticed on idle connections. */
const KEEPALIVE_MS = 10_000;

/** The default connector: a TCP connection per link. */
export const socketConnector: LineConnector = {
  connect: (address, handlers, connectTimeoutMs) => new SocketLineLink(address, handlers, connectTimeoutMs),
};

class SocketLineLink implements LineLink {
  readonly closed: Promise<void>;
  private readonly socket: net.Socket;
  private inbox = '';
  private outbox = '';
  private flushQueued = false;
  private error: Error | undefined;

  constructor(
    readonly address: Address,
    private readonly handlers: LineHandlers,
    connectTimeoutMs: number,
  ) {
    const socket = net.connect({ host: address.host, port: address.port });
    this.socket = socket;
    socket.setNoDelay(true); // we batch ourselves; Nagle would only add latency
    socket.setEncoding('utf8'); // keys are UTF-8; the decoder keeps split characters whole
    socket.setTimeout(connectTimeoutMs);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.setKeepAlive(true, KEEPALIVE_MS);
      handlers.onOpen();
    });
    socket.on('timeout', () => {
      socket.destroy(errorWithText('io-timeout', `connect to ${formatAddress(address)} timed out`));
    });
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => {
      this.error ??= error;
    });
    this.closed = new Promise((resolve) => {
      socket.once('close', () => {
        resolve();
        handlers.onClose(this.error);
      });
    });
  }

  write(line: string): void {
    this.outbox += `${line}\n`;
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flush);
    }
  }

  writeNow(line: string): void {
    this.outbox += `${line}\n`;
    this.flush();
  }

  end(): Promise<void> {
    this.flush();
    this.socket.end();
    // A peer that never closes its side must not hold our close() forever.
    const timer = setTimeout(() => this.socket.destroy(), 1000);
    timer.unref();
    return this.closed;
  }

  destroy(error?: Error): void {
    if (error) this.error ??= error;
    this.socket.destroy();
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    if (this.outbox === '') return;
    const out = this.outbox;
    this.outbox = '';
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(out);
  };

  private receive(chunk: string): void {
    const text = this.inbox === '' ? chunk : this.inbox + chunk;
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      if (newline < 0) break;
      const end = newline > start && text.charCodeAt(newline - 1) === 13 /* \r */ ? newline - 1 : newline;
      if (end > start) this.handlers.onLine(text.slice(start, end));
      // A handler may have closed us (a redirect, a protocol error): stop reading this socket.
      if (this.socket.destroyed) return;
      start = newline + 1;
    }
    this.inbox = start === 0 ? text : text.slice(start);
    if (this.inbox.length > MAX_LINE_CHARS) {
      this.destroy(errorWithText('protocol-error', `a server line longer than ${MAX_LINE_CHARS} characters`));
    }
  }
}
