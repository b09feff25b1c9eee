// Section 5b: what the console's read side can cost the lock path at 100,000 locks (issue 10,
// section 5). One `baton serve` holding 100,000 locks, a canary client doing acquire+release
// pairs on one key in a loop, a millisecond apart (its p50/p99/max is the figure), and three
// conditions alternating
// within each repeat:
//   no load            the canary alone
//   50 idle streams    50 GET /api/v1/events that send their request and never read a byte
//                      (from 127.0.0.1 to 127.0.0.7: the daemon caps streams per address),
//                      opened as the canary starts, so the window covers their snapshots
//   4 pollers          four loops of GET /api/v1/locks?limit=1, each waiting for its answer
// The load runs in its own Node process (its CPU is not the canary's or the server's). The
// server's RSS is sampled every 100 ms; the row shows the largest sample.
// With a console build (`npm run build`) the daemon serves the console (Next); without one it
// runs --no-console (the same handlers). BATON_BIN points the section at another checkout's
// bin/baton, to measure a server from before a change with the same load.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { KeyedClient } from '../../lib/client/index.ts';
import { startBaton } from '../baton-process.ts';
import { track } from '../servers/server-process.ts';
import { alternate, medians, pairedRatio } from '../side-by-side.ts';
import { percentile, round } from '../stats.ts';

export const LOAD_LOCKS = 100_000;
const STREAMS = 50;
const POLLERS = 4;
/** The canary's pause between two pairs. */
const PAUSE_MS = 1;

async function openStreams(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  return Number(/^baton_console_event_streams (\d+)$/m.exec(text)?.[1] ?? 0);
}

export type ConsoleLoadCondition = 'no load' | '50 never-reading event streams' | '4 pollers of GET /api/v1/locks?limit=1';

export interface ConsoleLoadRow {
  condition: ConsoleLoadCondition;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  pairs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  p99VsNone: number | null;
  /** Polls answered (pollers) or streams the daemon accepted (streams) during the window. */
  loadCount: number;
}

export interface ConsoleLoadResult {
  mode: 'console' | '--no-console';
  server: string;
  locks: number;
  rows: ConsoleLoadRow[];
}

function rssMiB(pid: number): number {
  return round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024, 0);
}

/** The load process: prints one number (accepted streams, or answered polls) when told to stop. */
function loadScript(kind: 'streams' | 'pollers', httpPort: number): string {
  if (kind === 'streams') {
    return `const net = require('node:net'); let ok = 0; const socks = [];
      for (let i = 0; i < ${STREAMS}; i++) {
        const s = net.connect({ host: '127.0.0.1', port: ${httpPort}, localAddress: '127.0.0.' + (1 + (i % 7)) }, () => {
          s.pause(); s.write('GET /api/v1/events HTTP/1.1\\r\\nHost: 127.0.0.1:${httpPort}\\r\\nAccept: text/event-stream\\r\\n\\r\\n');
        });
        s.on('error', () => {}); socks.push(s);
      }
      process.on('message', () => { process.send(String(socks.filter((s) => !s.destroyed).length)); process.exit(0); });`;
  }
  return `let n = 0, run = true;
    const loop = async () => { while (run) { const r = await fetch('http://127.0.0.1:${httpPort}/api/v1/locks?limit=1'); await r.arrayBuffer(); n++; } };
    for (let i = 0; i < ${POLLERS}; i++) loop().catch(() => {});
    process.on('message', () => { run = false; process.send(String(n)); setTimeout(() => process.exit(0), 50); });`;
}

export async function consoleLoadSection(seconds: number, repeats: number): Promise<ConsoleLoadResult> {
  const root = new URL('../../', import.meta.url).pathname;
  const bin = process.env.BATON_BIN;
  const consoleMode = existsSync(`${bin === undefined ? root : new URL('../', `file://${bin}`).pathname}.next/BUILD_ID`);
  const baton = await startBaton([], { console: consoleMode, ...(bin === undefined ? {} : { bin }) });
  track(baton.child);
  const pid = baton.child.pid as number;
  const holders = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
  // A stalled server is what is measured: the canary waits for its answers however long they take.
  const canary = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`], releaseAttemptTimeout: 120_000, releaseRetryFor: 240_000 });
  try {
    for (let i = 0; i < LOAD_LOCKS; i += 2_000) {
      await Promise.all(Array.from({ length: 2_000 }, (_, j) => holders.acquire(`held/${String(i + j).padStart(6, '0')}`, { lease: 3_600_000 })));
    }
    for (let i = 0; i < 500; i++) await (await canary.acquire('canary', { lease: 10_000 })).release(); // warm-up
    const measure = async (kind: 'streams' | 'pollers' | null) => {
      const rssBefore = rssMiB(pid);
      const child = kind === null ? null : spawn(process.execPath, ['-e', loadScript(kind, baton.httpPort)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      if (child !== null) track(child);
      let peak = rssBefore;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100);
      const samples: number[] = [];
      const until = performance.now() + seconds * 1_000;
      try {
        // A closed loop with a pause: each pair timed from its start, the next one a millisecond
        // after (the canary must not be a load of its own). A stall shows in max and in how few
        // pairs the window held; p99 counts each stalled pair once.
        while (performance.now() < until) {
          const t0 = performance.now();
          const grant = await canary.acquire('canary', { lease: 10_000 });
          await grant.release();
          samples.push(performance.now() - t0);
          await new Promise((r) => setTimeout(r, PAUSE_MS));
        }
      } finally {
        clearInterval(sampler);
      }
      let loadCount = 0;
      if (child !== null) {
        loadCount = await new Promise<number>((resolve) => {
          child.once('message', (m) => resolve(Number(m)));
          child.once('exit', () => resolve(loadCount));
          child.send('stop');
        });
        child.kill();
        // The next condition starts once the daemon has let go of the streams and is quiet again.
        for (let i = 0; i < 600 && (await openStreams(baton.httpPort)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return {
        p50Ms: round(percentile(samples, 50), 3),
        p99Ms: round(percentile(samples, 99), 3),
        maxMs: round(Math.max(...samples), 1),
        pairs: samples.length,
        rssBeforeMiB: rssBefore,
        rssPeakMiB: peak,
        loadCount,
      };
    };
    const conditions: { name: ConsoleLoadCondition; kind: 'streams' | 'pollers' | null }[] = [
      { name: 'no load', kind: null },
      { name: '50 never-reading event streams', kind: 'streams' },
      { name: '4 pollers of GET /api/v1/locks?limit=1', kind: 'pollers' },
    ];
    const runs = await alternate(repeats, conditions, (c) => measure(c.kind), 'console load');
    const none = runs.get('no load') ?? [];
    const rows = conditions.map(({ name }) => {
      const mine = runs.get(name) ?? [];
      return { condition: name, ...medians(mine), p99VsNone: name === 'no load' ? null : pairedRatio(mine, none, 'p99Ms') };
    });
    return { mode: consoleMode ? 'console' : '--no-console', server: bin ?? 'this checkout', locks: LOAD_LOCKS, rows };
  } finally {
    await Promise.allSettled([holders.close(), canary.close()]);
    await baton.stop();
  }
}
