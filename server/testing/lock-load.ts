// Load on a node's keyed port for the join tests and benchmark: a large table filled on one
// pipelined connection, and a paced handover churn (two connections take turns on a pool of
// keys: one holds, the other queues behind it, the first releases and the lock passes).
import { connect, type Socket } from 'node:net';

/** Requests in flight while filling: under the daemon's per-connection backlog (--max-backlog, 10,000). */
const FILL_WINDOW = 5_000;

/** Takes `count` locks named `<prefix>/<i>` on one pipelined connection (600 s leases); resolves when all are granted. */
export function fillLocks(port: number, count: number, prefix = 'join/fill'): Promise<void> {
  // Keyed grants outlive their connection (fixed leases): the table stays when it closes.
  return fillPipelined(port, count, {
    request: (i) => `A ${prefix}/${i} 600 0\n`,
    lineEnd: '\n',
    // Every answer is a grant (`A <key> <token>`): code 65 is `A`.
    ok: (reply, start) => reply.charCodeAt(start) === 65,
    what: 'unexpected reply',
  });
}

/** What one pipelined fill sends and accepts (fillPipelined). */
export interface PipelinedFill {
  /** The request line of the i-th item, line end included. */
  request(i: number): string;
  /** How the server ends a reply line. */
  lineEnd: string;
  /** Whether the reply starting at `start` of `buffered` is a success. */
  ok(buffered: string, start: number, end: number): boolean;
  /** How a failed reply is named in the error. */
  what: string;
}

/**
 * Sends `count` requests on one connection to `port`, at most FILL_WINDOW unanswered (under
 * Baton's per-connection backlog, --max-backlog 10,000), each answered by one line; resolves when
 * every answer was a success, rejects at the first that is not. Baton's fill and the scale
 * bench's Redis fill are this loop with their own lines.
 */
export function fillPipelined(port: number, count: number, fill: PipelinedFill): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const step = fill.lineEnd.length;
    let sent = 0;
    let answered = 0;
    let buffered = '';
    const sendMore = () => {
      let out = '';
      const upTo = Math.min(count, answered + FILL_WINDOW);
      for (; sent < upTo; sent++) out += fill.request(sent);
      if (out !== '') socket.write(out);
    };
    socket.setEncoding('latin1');
    socket.on('connect', sendMore);
    socket.on('data', (text: string) => {
      buffered += text;
      let start = 0;
      let nl = buffered.indexOf(fill.lineEnd, start);
      while (nl >= 0) {
        if (!fill.ok(buffered, start, nl)) {
          socket.destroy();
          reject(new Error(`${fill.what} ${buffered.slice(start, nl)}`));
          return;
        }
        answered++;
        start = nl + step;
        nl = buffered.indexOf(fill.lineEnd, start);
      }
      buffered = buffered.slice(start);
      if (answered === count) {
        socket.destroy();
        resolve();
      } else if (sent - answered < FILL_WINDOW / 2) sendMore();
    });
    socket.on('error', reject);
  });
}

/** One keyed connection with at most one request in flight per (op, key). */
class KeyedLine {
  private readonly socket: Socket;
  private buffered = '';
  private readonly waiting = new Map<string, (line: string) => void>();
  /** Lines that answered no request (a redirect, an error the churn did not expect). */
  readonly stray: string[] = [];
  readonly ready: Promise<void>;

  constructor(port: number) {
    this.socket = connect({ host: '127.0.0.1', port });
    this.socket.setNoDelay(true);
    this.socket.setEncoding('latin1');
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('error', () => {});
    this.socket.on('data', (text: string) => this.onData(text));
  }

  /** Sends `line`; resolves with the reply to `op key` (an `E op key ...` counts). */
  request(op: 'A' | 'R', key: string, line: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.set(`${op} ${key}`, resolve);
      this.socket.write(`${line}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(text: string): void {
    this.buffered += text;
    let nl = this.buffered.indexOf('\n');
    while (nl >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const words = line.split(' ');
      const id = words[0] === 'E' ? `${words[1]} ${words[2]}` : `${words[0]} ${words[1]}`;
      const resolve = this.waiting.get(id);
      if (resolve === undefined) this.stray.push(line);
      else {
        this.waiting.delete(id);
        resolve(line);
      }
      nl = this.buffered.indexOf('\n');
    }
  }
}

export interface ChurnResult {
  /** Acquire+release pairs completed. */
  pairs: number;
  /** Release sent → the queued client's grant received (ms), one per handover. */
  handoverMs: number[];
  /** Replies that were not a grant or an OK (errors, redirects), and lines nobody asked for. */
  unexpected: string[];
}

export interface Churn {
  /** The figures so far (added to while the churn runs). */
  readonly live: ChurnResult;
  stop(): Promise<ChurnResult>;
}

const TICK_MS = 10;

/**
 * About `pairsPerSec` acquire+release pairs a second on `keys` keys named `<prefix>/<i>`: each
 * cycle takes a key on one connection, queues the other behind it, and releases (a handover),
 * then the second releases: two pairs per cycle.
 */
export async function startChurn(port: number, pairsPerSec: number, keys = 200, prefix = 'join/churn'): Promise<Churn> {
  const x = new KeyedLine(port);
  const y = new KeyedLine(port);
  await Promise.all([x.ready, y.ready]);
  const result: ChurnResult = { pairs: 0, handoverMs: [], unexpected: [] };
  const idle = Array.from({ length: keys }, (_, i) => `${prefix}/${i}`);
  const running = new Set<Promise<void>>();
  const token = (reply: string, key: string): string | null => {
    const m = /^A (\S+) (\d+)$/.exec(reply);
    if (m === null || m[1] !== key) {
      result.unexpected.push(reply);
      return null;
    }
    return m[2] as string;
  };
  const released = (reply: string) => {
    if (!/^R \S+ OK$/.test(reply)) result.unexpected.push(reply);
    else result.pairs++;
  };
  const cycle = async (key: string): Promise<void> => {
    const first = token(await x.request('A', key, `A ${key} 30 0`), key);
    if (first === null) return;
    const queued = y.request('A', key, `A ${key} 30 0`);
    // Let the second acquire reach the server and queue before the release.
    await new Promise((r) => setTimeout(r, 2));
    const t0 = performance.now();
    const release = x.request('R', key, `R ${key} ${first}`);
    const second = token(await queued, key);
    if (second !== null) result.handoverMs.push(performance.now() - t0);
    released(await release);
    if (second !== null) released(await y.request('R', key, `R ${key} ${second}`));
  };
  let owed = 0;
  const timer = setInterval(() => {
    owed += (pairsPerSec / 2) * (TICK_MS / 1_000);
    while (owed >= 1 && idle.length > 0) {
      owed--;
      const key = idle.shift() as string;
      const p = cycle(key).finally(() => {
        running.delete(p);
        idle.push(key);
      });
      running.add(p);
    }
    // A server that stopped answering does not pile up cycles: what is owed while all keys are busy is dropped.
    if (idle.length === 0) owed = 0;
  }, TICK_MS);
  return {
    live: result,
    async stop(): Promise<ChurnResult> {
      clearInterval(timer);
      await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, 5_000))]);
      x.close();
      y.close();
      result.unexpected.push(...x.stray, ...y.stray);
      return result;
    },
  };
}
