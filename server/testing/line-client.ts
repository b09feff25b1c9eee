// A raw line client for integration tests: connects, sends lines, and awaits reply lines
// with a deadline (never a fixed sleep).
import { connect, type Socket } from 'node:net';

export interface LineClientOptions {
  /** The default deadline of next(), take(), waitClosed() and closedWith(); 3,000 ms if not given. */
  timeoutMs?: number;
  /**
   * Keeps a trailing "\r" on each line read, so a test can pin that the server ends its lines
   * with a bare "\n". By default it is dropped, which reads "\r\n" and "\n" alike.
   */
  keepCr?: boolean;
}

export class LineClient {
  readonly lines: string[] = [];
  closed = false;
  private buffered = '';
  private waiters: Array<() => void> = [];
  private readonly timeoutMs: number;

  private constructor(
    readonly socket: Socket,
    options: LineClientOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 3_000;
    const keepCr = options.keepCr ?? false;
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      this.buffered += text;
      let nl = this.buffered.indexOf('\n');
      while (nl >= 0) {
        const line = this.buffered.slice(0, nl);
        this.lines.push(keepCr ? line : line.replace(/\r$/, ''));
        this.buffered = this.buffered.slice(nl + 1);
        nl = this.buffered.indexOf('\n');
      }
      this.wake();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(port: number, host = '127.0.0.1', options: LineClientOptions = {}): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new LineClient(socket, options));
      });
      socket.once('error', reject);
    });
  }

  send(...lines: string[]): void {
    this.socket.write(lines.map((l) => `${l}\n`).join(''));
  }

  /** Resolves with the next unread line; rejects after `ms`. */
  async next(ms = this.timeoutMs): Promise<string> {
    await this.until(() => this.lines.length > 0, ms, 'a reply line');
    return this.lines.shift() as string;
  }

  /** Waits until `count` unread lines are buffered, and takes them. */
  async take(count: number, ms = this.timeoutMs): Promise<string[]> {
    await this.until(() => this.lines.length >= count, ms, `${count} reply lines`);
    return this.lines.splice(0, count);
  }

  /**
   * The first buffered line matching `pattern`, waiting for it if need be. Reads without taking:
   * `lines` stays the whole story, for tests that look at everything the client was told.
   */
  async waitFor(pattern: RegExp, ms = this.timeoutMs): Promise<string> {
    await this.until(() => this.lines.some((l) => pattern.test(l)), ms, `a line matching ${pattern}`);
    return this.lines.find((l) => pattern.test(l)) as string;
  }

  async waitClosed(ms = this.timeoutMs): Promise<void> {
    await this.until(() => this.closed, ms, 'the connection to close');
  }

  /** Waits until the server has closed the connection, and takes every unread line. */
  async closedWith(ms = this.timeoutMs): Promise<string[]> {
    await this.waitClosed(ms);
    return this.lines.splice(0);
  }

  close(): void {
    this.socket.destroy();
  }

  async until(ready: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = performance.now() + ms;
    while (!ready()) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; got ${JSON.stringify(this.lines)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }
}

/** Polls `ready` until true or the deadline passes. */
export async function eventually(ready: () => boolean, ms = 3_000, what = 'a condition'): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
