// Helpers for the socket-level fuzz tests (server/*-fuzz.test.ts): a raw client that keeps
// every byte the server sends (and `fail`, which reports both sides of it), a writer that cuts
// planned lines into random chunks, a splitter that sees the bytes written the way the server
// does, and a monitor that checks the lock invariants on the engine's event stream (it only
// records problems: a listener that threw would break the engine it is watching).
import { connect, type Socket } from 'node:net';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { MAX_LINE_BYTES } from '../../lib/protocol/line-splitter.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `ready` until it holds; throws once `ms` have passed. */
export async function eventually(ready: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await ready())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
}

export class RawConnection {
  closed = false;
  /** We destroyed it before the server closed: the server may not have read all we wrote. */
  destroyedByUs = false;
  private readonly received: Buffer[] = [];
  private readonly written: Buffer[] = [];
  private waiters: Array<() => void> = [];

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      this.wake();
    });
    // Resets, and writes after the server closed, are part of the game; 'close' follows.
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  write(bytes: Uint8Array | string): void {
    if (bytes.length === 0 || this.socket.destroyed || this.socket.writableEnded) return;
    const buf = Buffer.from(bytes);
    this.written.push(buf);
    this.socket.write(buf);
  }

  /** We sent our FIN. */
  endedByUs = false;

  /** Sends our FIN: the server answers what it has read, then closes. */
  end(): void {
    this.endedByUs = true;
    this.socket.end();
  }

  /** Stops reading: what the server sends piles up in the kernel, then in the server. */
  pause(): void {
    this.socket.pause();
  }

  destroy(): void {
    if (!this.closed) this.destroyedByUs = true;
    this.socket.destroy();
  }

  /** Closes with a reset (RST) instead of a FIN: the server learns it from an error, not an end. */
  reset(): void {
    if (!this.closed) this.destroyedByUs = true;
    if (this.socket.destroyed) return;
    this.socket.resetAndDestroy();
  }

  /** Every byte handed to the socket, in order. */
  get sent(): Buffer {
    return Buffer.concat(this.written);
  }

  /** The server's complete lines so far (UTF-8), and its unfinished tail. */
  replies(): { lines: string[]; tail: string } {
    const parts = Buffer.concat(this.received).toString('utf8').split('\n');
    const tail = parts.pop() ?? '';
    return { lines: parts, tail };
  }

  /** Waits, woken by socket events, until `ready` holds; throws after `ms`. */
  async until(ready: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = performance.now() + ms;
    while (!ready()) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; got ${JSON.stringify(this.replies())}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** Fails the test with everything `c` sent and received. */
export function fail(why: string, c: RawConnection): never {
  throw new Error(`${why}\n  sent: ${JSON.stringify(c.sent.toString('latin1'))}\n  got: ${JSON.stringify(c.replies())}`);
}

/** How one planned line reaches the socket. */
export interface Chunking {
  /** Where to split the line, as fractions of its length. */
  cuts: number[];
  /** Pause before each separate write of the line. */
  delayMs: number;
  /** Send the line's first piece in the same write as what came before it. */
  coalesce: boolean;
}

export interface PlannedLine {
  /** Built just before it is written, so a release can name a token granted moments ago. */
  bytes: () => Uint8Array;
  chunking: Chunking;
}

/**
 * Writes `lines` in order. With `stopAt`, writes only the lines before `stopAt.line` and the
 * first `stopAt.fraction` of that one (the caller then cuts the connection mid-line).
 */
export async function writePlanned(conn: RawConnection, lines: PlannedLine[], stopAt?: { line: number; fraction: number }): Promise<void> {
  let pending: Buffer[] = [];
  const flush = (): void => {
    if (pending.length > 0) conn.write(Buffer.concat(pending));
    pending = [];
  };
  for (const [i, line] of lines.entries()) {
    if (stopAt !== undefined && i > stopAt.line) break;
    let bytes = Buffer.from(line.bytes());
    if (stopAt !== undefined && i === stopAt.line) bytes = bytes.subarray(0, Math.floor(bytes.length * stopAt.fraction));
    const cuts = line.chunking.cuts.map((f) => Math.floor(f * bytes.length)).filter((p) => p > 0 && p < bytes.length);
    const ends = [...new Set(cuts)].sort((a, b) => a - b).concat(bytes.length);
    let at = 0;
    for (const [n, end] of ends.entries()) {
      if (n > 0 || !line.chunking.coalesce) {
        flush();
        if (line.chunking.delayMs > 0) await sleep(line.chunking.delayMs);
      }
      pending.push(bytes.subarray(at, end));
      at = end;
    }
  }
  flush();
}

export interface ServerView {
  /** Complete lines without their line endings, up to (not including) an overlong one. */
  lines: Buffer[];
  /** A line (finished or not) passed the limit: the server answers it and closes. */
  overflow: boolean;
  /** Bytes of an unfinished last line (when no overflow). */
  tail: Buffer;
}

/** Splits `stream` into lines as the server's LineSplitter does, whatever the chunking. */
export function splitLikeServer(stream: Buffer, maxLine = MAX_LINE_BYTES): ServerView {
  const lines: Buffer[] = [];
  let pos = 0;
  for (let nl = stream.indexOf(10, pos); nl >= 0; nl = stream.indexOf(10, pos)) {
    const end = nl > pos && stream[nl - 1] === 13 ? nl - 1 : nl;
    if (end - pos > maxLine) return { lines, overflow: true, tail: Buffer.alloc(0) };
    lines.push(stream.subarray(pos, end));
    pos = nl + 1;
  }
  const tail = stream.subarray(pos);
  // A line of exactly the limit may be followed by its CR before the LF arrives.
  const limit = tail[tail.length - 1] === 13 ? maxLine + 1 : maxLine;
  return tail.length > limit ? { lines, overflow: true, tail: Buffer.alloc(0) } : { lines, overflow: false, tail };
}

/**
 * Watches the engine: grant tokens strictly increase and are never reused, a lock has at most
 * one holder, and a holder ends (release, expire, force-release) only once, by its own token.
 */
export class EngineMonitor {
  readonly problems: string[] = [];
  /** Every grant seen, by token. */
  readonly grants = new Map<bigint, { lock: string; protocol: string }>();
  /** Holders ended by a keyed `R` (release events with cause 'release'). */
  releasedByRequest = 0;
  readonly stop: () => void;
  private readonly holders = new Map<string, bigint>();
  private readonly latestByLock = new Map<string, bigint>();
  private last: bigint | null = null;

  constructor(engine: LockEngine) {
    this.stop = engine.subscribe((e) => this.see(e));
  }

  /** The newest token granted on `lock` (any lock when omitted). */
  latest(lock?: string): bigint | undefined {
    return lock === undefined ? (this.last ?? undefined) : this.latestByLock.get(lock);
  }

  /** Locks that have a holder according to the events. */
  get holding(): number {
    return this.holders.size;
  }

  private see(e: LockEvent): void {
    if (e.type === 'grant') {
      if (this.last !== null && e.token <= this.last) this.problems.push(`grant of ${e.lock} with token ${e.token}, not above ${this.last}`);
      const holder = this.holders.get(e.lock);
      if (holder !== undefined) this.problems.push(`${e.lock} granted with token ${e.token} while token ${holder} holds it`);
      this.last = e.token;
      this.holders.set(e.lock, e.token);
      this.latestByLock.set(e.lock, e.token);
      this.grants.set(e.token, { lock: e.lock, protocol: e.protocol });
    } else if (e.type === 'release' || e.type === 'expire' || e.type === 'force-release') {
      const holder = this.holders.get(e.lock);
      if (holder !== e.token) this.problems.push(`${e.type} of ${e.lock} token ${e.token}, but the holder is ${holder ?? 'nobody'}`);
      else this.holders.delete(e.lock);
      if (e.type === 'release' && e.cause === 'release') this.releasedByRequest++;
    }
  }
}

/**
 * The `baton_connections` gauge of /metrics, per protocol. A daemon with a short io-timeout
 * whose event loop is busy with a flood may time out the scrape itself (408): asked again.
 */
export async function connectionGauge(httpPort: number): Promise<{ keyed: number; session: number }> {
  let answer = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
    answer = `${res.status} ${await res.text()}`;
    if (res.status === 200) break;
  }
  const read = (protocol: string): number => {
    const m = new RegExp(`^baton_connections\\{protocol="${protocol}"\\} (\\d+)$`, 'm').exec(answer);
    if (m === null) throw new Error(`no baton_connections gauge for ${protocol} in /metrics: ${answer.slice(0, 200)}`);
    return Number(m[1]);
  };
  return { keyed: read('keyed'), session: read('session') };
}
