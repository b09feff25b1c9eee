// Load for the scale section that server/testing/lock-load.ts does not have: the same pipelined
// fill as its fillLocks but as Redis locks (`SET key value NX PX`, the comparison), and
// waiting requests queued behind held Baton locks. Plus the process memory figures the section
// reads from /proc.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fillPipelined } from '../server/testing/lock-load.ts';

/** Requests in flight while filling: fillLocks's window, under Baton's per-connection backlog (10,000). */
const WINDOW = 5_000;

/** The process's resident set and its peak (VmHWM), in KiB. */
export function memKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A redlock-style value: 16 random-looking hex digits per lock (distinct, as a client's token is). */
const lockValue = (i: number) => (i * 2_654_435_761).toString(16).padStart(16, '0').slice(-16);

/**
 * Takes `count` Redis locks named `<prefix>/<i>` with `SET key value NX PX 600000`, inline
 * commands pipelined on one connection as fillLocks does (fillPipelined's window); resolves when
 * all are `+OK`.
 */
export function fillRedisLocks(port: number, count: number, prefix: string): Promise<void> {
  return fillPipelined(port, count, {
    request: (i) => `SET ${prefix}/${i} ${lockValue(i)} NX PX 600000\r\n`,
    lineEnd: '\r\n',
    ok: (reply, start, end) => end - start === 3 && reply.startsWith('+OK', start),
    what: 'redis answered',
  });
}

export interface Waiters {
  close(): void;
}

/**
 * Queues one waiting acquire (600 s lease, no wait limit) on each of `count` keys `<prefix>/<i>`
 * that are already held, WINDOW per connection (under the backlog limit). Each connection ends
 * with an acquire of a free key: Baton reads a connection's lines in order, so its grant means
 * every waiter before it is queued. Resolves once all are; close() drops them.
 */
export async function queueWaiters(port: number, count: number, prefix: string): Promise<Waiters> {
  const sockets: Socket[] = [];
  const connections = Math.ceil(count / WINDOW);
  await Promise.all(
    Array.from(
      { length: connections },
      (_, c) =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port });
          sockets.push(socket);
          const sentinel = `scale/sentinel/${c}`;
          let out = '';
          for (let i = c * WINDOW; i < Math.min(count, (c + 1) * WINDOW); i++) out += `A ${prefix}/${i} 600 0\n`;
          out += `A ${sentinel} 600 0\n`;
          let buffered = '';
          socket.setEncoding('latin1');
          socket.on('connect', () => socket.write(out));
          socket.on('data', (text: string) => {
            buffered += text;
            if (buffered.startsWith(`A ${sentinel} `)) resolve();
            else if (buffered.includes('\n')) reject(new Error(`a waiter was answered: ${buffered.split('\n')[0]}`));
          });
          socket.on('error', reject);
        }),
    ),
  );
  return {
    close: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
