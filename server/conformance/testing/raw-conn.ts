// A raw TCP connection for the real-daemon check: writes what a client would, and reads the
// daemon's bytes exactly as they come (lines, or a given number of characters), with deadlines.
import { connect } from 'node:net';
import type { Socket } from 'node:net';

export class RawConn {
  /** Received and not yet read. */
  private pending = '';
  private ended = false;
  private wake: (() => void) | undefined;
  /** The script closed or reset it: an unbound label does not alias it any more. */
  gone = false;
  /** Reset by the script: what the daemon had sent there is no one's to read. */
  wasReset = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      this.pending += text;
      this.wake?.();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  static open(port: number): Promise<RawConn> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.off('error', reject);
        resolve(new RawConn(socket));
      });
      socket.once('error', reject);
    });
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** FIN: the client closes its side. */
  end(): void {
    this.gone = true;
    this.socket.end();
  }

  /** RST. */
  reset(): void {
    this.gone = true;
    this.wasReset = true;
    this.socket.resetAndDestroy();
  }

  destroy(): void {
    this.gone = true;
    this.socket.destroy();
  }

  /** The next line (without its `\n`), or an Error saying what arrived instead. */
  async line(ms: number): Promise<string | Error> {
    const ok = await this.until(() => this.pending.includes('\n'), ms);
    if (!ok) return new Error(`no line within ${ms} ms; ${this.describe()}`);
    const at = this.pending.indexOf('\n');
    const line = this.pending.slice(0, at);
    this.pending = this.pending.slice(at + 1);
    return line;
  }

  /** Exactly `count` characters. */
  async chars(count: number, ms: number): Promise<string | Error> {
    const ok = await this.until(() => this.pending.length >= count, ms);
    if (!ok) return new Error(`fewer than ${count} characters within ${ms} ms; ${this.describe()}`);
    const text = this.pending.slice(0, count);
    this.pending = this.pending.slice(count);
    return text;
  }

  /** Resolves true once the daemon closed the connection with nothing left unread. */
  async closedQuietly(ms: number): Promise<boolean> {
    await this.until(() => this.ended || this.pending !== '', ms);
    return this.ended && this.pending === '';
  }

  /** What is unread, for a failure message. */
  describe(): string {
    const state = this.ended ? 'closed' : 'open';
    return this.pending === '' ? `nothing unread (${state})` : `unread ${JSON.stringify(this.pending.slice(0, 200))} (${state})`;
  }

  unread(): string {
    return this.pending;
  }

  private async until(ready: () => boolean, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!ready()) {
      if (this.ended && !ready()) return false;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return true;
  }
}
