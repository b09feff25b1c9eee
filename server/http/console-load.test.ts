// What event streams that never read cost a real daemon (`bin/baton serve`, its own process, so
// its memory is its own): with 20,000 locks held, 40 streams from five loopback addresses that
// send their request and never read a byte. Before the snapshot was paged, each such stream
// had the whole table built and queued at once (about 4.6 MB here, 23 MB at 100,000 locks):
// the server's memory grew by the table times the streams. Now a stream that does not read
// gets a page or so, the ninth stream from one address is refused with 429, deltas past the
// slow-reader limit cut the streams off, and the lock path answers throughout.
import { readStartedPorts } from '../testing/start-line.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyedClient } from '../../lib/client/index.ts';
import { BATON_BIN, serveArgs } from '../testing/serve-args.ts';

const BATON = process.env.BATON_BIN ?? BATON_BIN;
const LOCKS = 20_000;
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const PER_ADDRESS = 8;

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startDaemon(): Promise<{ child: ChildProcess; lockPort: number; httpPort: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'baton-console-load-'));
  const child = spawn(
    process.execPath,
    [
      BATON,
      ...serveArgs(dataDir),
      '--no-console',

      '--log-level',
      'warn',
      '--drain',
      '0ms',
      '--admin-token',
      'console-load-admin-token-0123',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  cleanups.push(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  const { lockPort, httpPort } = await readStartedPorts(child);
  return { child, lockPort, httpPort };
}

/** The daemon's resident memory, from /proc. */
function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** Sends the request and never reads: the socket is paused before any byte arrives. */
function neverReadingStream(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => {
      socket.pause();
      socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
      resolve(socket);
    });
    socket.on('error', () => {}); // the server's cut is how it ends
    socket.once('error', reject);
    cleanups.push(() => void socket.destroy());
  });
}

async function statusOf(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

async function openStreams(port: number): Promise<number> {
  const metrics = await statusOf(port, '/metrics');
  return Number(/^baton_console_event_streams (\d+)$/m.exec(metrics.body)?.[1]);
}

describe('event streams that never read, against a real daemon with 20,000 locks', () => {
  it('cost the daemon a page each, not the table: bounded memory, the ninth per address refused, cut off at the slow-reader limit, the lock path answering', async () => {
    const d = await startDaemon();
    const pid = d.child.pid as number;
    const holder = new KeyedClient({ addresses: [`127.0.0.1:${d.lockPort}`] });
    cleanups.push(() => holder.close());
    for (let i = 0; i < LOCKS; i += 1_000) {
      await Promise.all(Array.from({ length: 1_000 }, (_, j) => holder.acquire(`held/${i + j}`, { lease: 600_000 })));
    }
    const before = rssMiB(pid);

    const streams: Socket[] = [];
    for (const address of ADDRESSES) for (let i = 0; i < PER_ADDRESS; i++) streams.push(await neverReadingStream(d.httpPort, address));
    // One more from an address that has its eight: refused with the documented JSON error.
    const refused = await fetch(`http://127.0.0.1:${d.httpPort}/api/v1/events`);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: 'too-many-streams' } });

    // While the daemon sends the streams what they will take, the lock path answers and memory is watched.
    let peak = before;
    const canary = new KeyedClient({ addresses: [`127.0.0.1:${d.lockPort}`] });
    cleanups.push(() => canary.close());
    const until = performance.now() + 3_000;
    let pairs = 0;
    while (performance.now() < until) {
      const grant = await canary.acquire('canary', { lease: 10_000 });
      await grant.release();
      pairs++;
      peak = Math.max(peak, rssMiB(pid));
    }
    expect(pairs).toBeGreaterThan(10);
    expect(await openStreams(d.httpPort)).toBe(ADDRESSES.length * PER_ADDRESS);
    // Measured on the 2-core machine: +244 MiB when each stream had the whole table queued
    // (40 x 4.6 MB, with 41 streams let in); +70 MiB now (a page or so per stream, held in the
    // stream's queue and node's socket buffers, and the garbage of 40 separate page walks).
    expect(peak - before).toBeLessThan(120);

    // Deltas keep coming for streams that take nothing: past 4 MiB each they are cut off.
    for (let round = 0; round < 12 && (await openStreams(d.httpPort)) > 0; round++) {
      const grants = await Promise.all(Array.from({ length: 5_000 }, (_, j) => holder.acquire(`churn/${round}/${j}`, { lease: 600_000 })));
      await new Promise((r) => setTimeout(r, 250)); // a flush: one delta with 5,000 upserts
      await Promise.all(grants.map((g) => g.release()));
      peak = Math.max(peak, rssMiB(pid));
    }
    expect(await openStreams(d.httpPort)).toBe(0);
    expect(peak - before).toBeLessThan(120);
    const grant = await canary.acquire('canary', { lease: 10_000 });
    await grant.release();
    expect(streams).toHaveLength(40);
  }, 120_000);
});
