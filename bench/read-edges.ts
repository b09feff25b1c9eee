// The outside probe's two read-side edges (issue 26, part 3, items 2 and 3), reproduced against
// one `baton serve` (`--no-console`: the same handlers) holding 100,000 locks for one client
// ("edge holder") and 50,000 waiters queued on one more lock (`edge/queue`). A canary client does
// acquire+release pairs on its own key, a millisecond apart; its pair latency p50/p99/max is the
// lock path's figure, under each condition in turn:
//   no load            the canary alone
//   queue reader       one loop of GET /api/v1/locks/edge%2Fqueue (as a client that does not
//                      page asks it: the whole queue before paging, the default page after)
//   held reader        one loop of GET /api/v1/clients/held?identity=edge%20holder (likewise)
//   100 streams join   100 GET /api/v1/events that never read, from 127.0.0.1 to 127.0.0.13
//                      (each 127.x address counts as its own client), opened as the window starts
//   100 streams churn  the same 100, each closed and opened again every 1.5 s
// The loads run in a child process (their CPU is not the canary's). Numbers on a shared machine
// are noisy: compare runs made one after the other, and repeat.
//
// Usage: node --import tsx bench/read-edges.ts [--seconds 4] [--repeats 1] [--bin <checkout>/bin/baton] [--console]
//        [--only 'no load,queue reader,held reader,100 streams join,100 streams churn']
// --bin runs another checkout's daemon (a before/after on one machine).
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { KeyedClient } from '../lib/client/index.ts';
import { startBaton } from './baton-process.ts';
import { intFlag, listFlag, stringFlag } from './flags.ts';
import { track } from './servers/server-process.ts';
import { alternate, medians } from './side-by-side.ts';
import { percentile, round } from './stats.ts';

const HELD = 100_000;
const WAITERS = 50_000;
const WAITER_SOCKETS = 10;
const STREAMS = 100;
const ADDRESSES = 13;
const HOLDER = 'edge holder';
/** The canary's pause between two pairs. */
const PAUSE_MS = 1;

const KINDS = ['queue reader', 'held reader', '100 streams join', '100 streams churn'] as const;
type Kind = (typeof KINDS)[number];

/** The load process: prints one number (answers read, or streams opened) when told to stop. */
function loadScript(kind: Kind, port: number): string {
  const streamOpen = `const net = require('node:net');
    const open = (i) => { const s = net.connect({ host: '127.0.0.1', port: ${port}, localAddress: '127.0.0.' + (1 + (i % ${ADDRESSES})) }, () => {
      s.pause(); s.write('GET /api/v1/events HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nAccept: text/event-stream\\r\\n\\r\\n'); });
      s.on('error', () => {}); opened++; return s; };
    let opened = 0; const socks = [];
    for (let i = 0; i < ${STREAMS}; i++) socks.push(open(i));`;
  if (kind === '100 streams join') return `${streamOpen} process.on('message', () => { process.send(String(opened)); process.exit(0); });`;
  if (kind === '100 streams churn') {
    // Each stream lives 1.5 s, the reconnects spread evenly over that time.
    return `${streamOpen}
      const step = 1500 / ${STREAMS}; let next = 0;
      const timer = setInterval(() => { const i = next++ % ${STREAMS}; socks[i].destroy(); socks[i] = open(i); }, step);
      process.on('message', () => { clearInterval(timer); process.send(String(opened)); process.exit(0); });`;
  }
  const path = kind === 'queue reader' ? '/api/v1/locks/edge%2Fqueue' : `/api/v1/clients/held?identity=${encodeURIComponent(HOLDER)}`;
  return `let n = 0, bytes = 0, run = true;
    const loop = async () => { while (run) { const r = await fetch('http://127.0.0.1:${port}${path}'); bytes += (await r.arrayBuffer()).byteLength; n++; } };
    loop().catch((e) => console.error(e));
    process.on('message', () => { run = false; process.send(n + ' ' + Math.round(bytes / Math.max(1, n))); setTimeout(() => process.exit(0), 50); });`;
}

/** Queues `count` keyed waiters (wait forever) for `name` over raw sockets; they stay until closed. */
async function queueWaiters(port: number, name: string, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let s = 0; s < WAITER_SOCKETS; s++) {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    socket.write(`A ${name} 3600 0\n`.repeat(count / WAITER_SOCKETS));
    sockets.push(socket);
  }
  return sockets;
}

async function waiterCount(httpPort: number): Promise<number> {
  const stats = (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/stats`)).json()) as { waiters: number };
  return stats.waiters;
}

async function openStreams(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  return Number(/^baton_console_event_streams (\d+)$/m.exec(text)?.[1] ?? 0);
}

const seconds = intFlag('--seconds', 4, 120);
const repeats = intFlag('--repeats', 1, 20);
const bin = stringFlag('--bin');
const only = listFlag('--only', ['no load', ...KINDS]);
// --console: serve the console too (Next; needs a console build in the checkout that runs).
const consoleMode = process.argv.includes('--console');
const baton = await startBaton([], { console: consoleMode, ...(bin === undefined ? {} : { bin }) });
track(baton.child);
const holders = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`], clientName: HOLDER });
const canary = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`], releaseAttemptTimeout: 120_000, releaseRetryFor: 240_000 });
let waiters: Socket[] = [];
try {
  for (let i = 0; i < HELD; i += 2_000) {
    await Promise.all(Array.from({ length: 2_000 }, (_, j) => holders.acquire(`held/${String(i + j).padStart(6, '0')}`, { lease: 3_600_000 })));
  }
  await holders.acquire('edge/queue', { lease: 3_600_000 });
  waiters = await queueWaiters(baton.lockPort, 'edge/queue', WAITERS);
  while ((await waiterCount(baton.httpPort)) < WAITERS) await new Promise((r) => setTimeout(r, 200));
  for (let i = 0; i < 500; i++) await (await canary.acquire('canary', { lease: 10_000 })).release(); // warm-up

  const measure = async (kind: Kind | null) => {
    const child = kind === null ? null : spawn(process.execPath, ['-e', loadScript(kind, baton.httpPort)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    if (child !== null) track(child);
    const samples: number[] = [];
    /** The samples of each second of the window, for the worst second's p50. */
    const perSecond: number[][] = [];
    const from = performance.now();
    const until = from + seconds * 1_000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const grant = await canary.acquire('canary', { lease: 10_000 });
      await grant.release();
      samples.push(performance.now() - t0);
      (perSecond[Math.floor((t0 - from) / 1_000)] ??= []).push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
    let answer = '0 0';
    if (child !== null) {
      answer = await new Promise<string>((resolve) => {
        child.once('message', (m) => resolve(String(m)));
        child.once('exit', () => resolve(answer));
        child.send('stop');
      });
      child.kill();
      for (let i = 0; i < 600 && (await openStreams(baton.httpPort)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const [count = 0, bytesEach = 0] = answer.split(' ').map(Number);
    return {
      p50Ms: round(percentile(samples, 50), 3),
      p99Ms: round(percentile(samples, 99), 3),
      maxMs: round(Math.max(...samples), 1),
      worstSecondP50Ms: round(Math.max(...perSecond.filter((b) => b !== undefined).map((b) => percentile(b, 50))), 3),
      pairs: samples.length,
      loadCount: count,
      bytesPerRead: bytesEach,
    };
  };
  const conditions = only.map((name) => ({ name, kind: name === 'no load' ? null : (name as Kind) }));
  const runs = await alternate(repeats, conditions, (c) => measure(c.kind), 'read edges');
  const mode = consoleMode ? 'console' : '--no-console';
  console.log(`read edges: ${HELD} held by one client, ${WAITERS} waiters on one lock, server ${bin ?? 'this checkout'} (${mode}), ${seconds} s x ${repeats}`);
  console.log('| condition | p50 ms | p99 ms | max ms | worst second p50 ms | pairs | reads or streams opened | bytes per read |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { name } of conditions) {
    const m = medians(runs.get(name) ?? []);
    console.log(`| ${name} | ${m.p50Ms} | ${m.p99Ms} | ${m.maxMs} | ${m.worstSecondP50Ms} | ${m.pairs} | ${m.loadCount} | ${m.bytesPerRead || '-'} |`);
  }
} finally {
  for (const w of waiters) w.destroy();
  await Promise.allSettled([holders.close(), canary.close()]);
  await baton.stop();
}
