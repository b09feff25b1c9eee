// A raw line client for integration tests: connects, sends lines, and awaits reply lines
// with a deadline (never a fixed sleep).
import { connect, type Socket } from 'node:net';

export class LineClient {
  readonly lines: string[] = [];
  closed = false;
  private buffered = '';
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      this.buffered += text;
      let nl = this.buffered.indexOf('\n');
      while (nl >= 0) {
        this.lines.push(this.buffered.slice(0, nl).replace(/\r$/, ''));
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

  static open(port: number, host = '127.0.0.1'): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port }, () => {
        socket.off('error', reject);
        resolve(new LineClient(socket));
      });
      socket.once('error', reject);
    });
  }

  send(...lines: string[]): void {
    this.socket.write(lines.map((l) => `${l}\n`).join(''));
  }

  /** Resolves with the next unread line; rejects after `ms`. */
  async next(ms = 3_000): Promise<string> {
    await this.until(() => this.lines.length > 0, ms, 'a reply line');
    return this.lines.shift() as string;
  }

  /** Waits until `count` unread lines are buffered, and takes them. */
  async take(count: number, ms = 3_000): Promise<string[]> {
    await this.until(() => this.lines.length >= count, ms, `${count} reply lines`);
    return this.lines.splice(0, count);
  }

  async waitClosed(ms = 3_000): Promise<void> {
    await this.until(() => this.closed, ms, 'the connection to close');
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
