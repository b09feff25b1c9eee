// An active growing its table, two builds side by side (issue 29: "an active growing to 5M locks
// freezes"). For each size and each repeat, each build in turn: a 2-node cluster (peer timeout
// 1 s) with only `a` started, so it is the active with a peer it expects, filled with N keyed
// locks of 600 s on one pipelined connection (server/testing/lock-load.ts fillLocks). While it
// fills, a's per-second loop figures are read from GET /api/v1/cluster twice a second: the
// longest wall delay (loopDelayMs), the longest block in CPU time (loopBusyMs), the same less GC
// (loopWorkMs) and the longest GC pause (gcPauseMs); and every gap over 50 ms of a 5 ms timer in
// the node (bench/loop-blocks.mjs), the longest block whatever second it fell in (the per-second
// figures can miss a block that ends as their second turns). After the fill: how many times a logged
// "frozen longer than the peer timeout: stepping out of the active role" (a false step-out: in a
// cluster, a failover risk). Figures are the longest over the fill; each row is one fill.
// --cpu-prof: CPU profiles of each fill (bench/join-cpu-prof.mjs) in a directory it prints.
//   node --import tsx bench/fill-pause.ts <old checkout> <new checkout> [--locks 1000000,5000000] [--runs 2] [--cpu-prof]
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, waitFor } from '../server/testing/cluster-harness.ts';
import { fillLocks } from '../server/testing/lock-load.ts';
import { intFlag, intListFlag } from './flags.ts';
import { PEER_TIMEOUT_MS } from './sections/failover-section.ts';
import { median } from './stats.ts';

const roots = process.argv.slice(2, 4).map((r) => path.resolve(r));
if (roots.length !== 2 || roots.some((r) => r.startsWith('-'))) {
  console.error('usage: fill-pause.ts <old checkout> <new checkout> [--locks 1000000,5000000] [--runs 2] [--cpu-prof]');
  process.exit(2);
}
const sizes = intListFlag('--locks', [1_000_000, 5_000_000], 20_000_000);
const runs = intFlag('--runs', 2, 20);
const preload = (file: string): string => ` --import ${fileURLToPath(new URL(file, import.meta.url))}`;
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''}${preload('./loop-blocks.mjs')}`.trim();
if (process.argv.includes('--cpu-prof')) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS}${preload('./join-cpu-prof.mjs')}`;
  process.env.JOIN_CPU_PROF_DIR = mkdtempSync(path.join(tmpdir(), 'fill-prof-'));
  console.log(`CPU profiles of each fill: ${process.env.JOIN_CPU_PROF_DIR}`);
}

interface Fill {
  /** 'old' or 'new' (the two checkouts may be one, to see the spread of a build against itself). */
  build: 'old' | 'new';
  locks: number;
  fillMs: number;
  delayMs: number;
  busyMs: number;
  workMs: number;
  gcMs: number;
  /** The longest gap of the node's 5 ms timer (loop-blocks.mjs), and how many were over 500 ms. */
  blockMs: number;
  over500: number;
  /** The most CPU time the process spent within one such gap: its own work in one go (GC included). */
  cpuBlockMs: number;
  stepOuts: number;
  /** frozenMs of each step-out. */
  frozen: number[];
}

const STEP_OUT = 'frozen longer than the peer timeout: stepping out of the active role';
const longestRecent = (xs?: number[]): number => Math.max(0, ...(xs ?? []).slice(-3));

async function fillOnce(build: 'old' | 'new', locks: number): Promise<Fill> {
  const root = build === 'old' ? (roots[0] as string) : (roots[1] as string);
  const cluster = await startCluster({ nodes: 2, start: [], peerTimeoutMs: PEER_TIMEOUT_MS, teardownGraceMs: 5_000, startTimeoutMs: 30_000 });
  const a = cluster.node('a');
  try {
    a.switchBuild(path.join(root, 'bin/baton'));
    await a.start();
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a active alone' });
    const worst = { delayMs: 0, busyMs: 0, workMs: 0, gcMs: 0 };
    let filling = true;
    const watch = (async () => {
      while (filling) {
        const v = await a.cluster().catch(() => null);
        worst.delayMs = Math.max(worst.delayMs, longestRecent(v?.loopDelayMs));
        worst.busyMs = Math.max(worst.busyMs, longestRecent(v?.loopBusyMs));
        worst.workMs = Math.max(worst.workMs, longestRecent(v?.loopWorkMs));
        worst.gcMs = Math.max(worst.gcMs, longestRecent(v?.gcPauseMs));
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const t0 = performance.now();
    await fillLocks(a.ports.lock, locks, 'bench/fill');
    const fillMs = Math.round(performance.now() - t0);
    // The second under way when the fill ended is read once more, after it has closed.
    await new Promise((r) => setTimeout(r, 1_200));
    filling = false;
    await watch;
    if (process.env.JOIN_CPU_PROF_DIR !== undefined && a.pid !== undefined) {
      process.kill(a.pid, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 3_000));
    }
    const log = a.logEntries();
    const steps = log.filter((e) => String(e.msg).includes(STEP_OUT));
    const gaps = log.filter((e) => e.msg === 'loop block');
    const blocks = gaps.map((e) => Number(e.ms));
    return {
      build,
      locks,
      fillMs,
      ...worst,
      blockMs: Math.max(0, ...blocks),
      over500: blocks.filter((ms) => ms > 500).length,
      cpuBlockMs: Math.max(0, ...gaps.map((e) => Number(e.cpuMs))),
      stepOuts: steps.length,
      frozen: steps.map((e) => Number(e.frozenMs)),
    };
  } finally {
    await cluster.close();
  }
}

const fills: Fill[] = [];
const cols = [
  'build',
  'locks',
  'fill ms',
  'longest block ms',
  'blocks > 500 ms',
  'most CPU in a block ms',
  'longest delay ms',
  'longest busy ms',
  'longest work ms',
  'longest GC ms',
  'step-outs',
];
console.log(
  `old ${roots[0]}\nnew ${roots[1]}\nload average at start ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(cols.join(' | '));
for (const locks of sizes) {
  for (let run = 0; run < runs; run++) {
    // Alternate which build goes first, so neither always fills on the quieter machine.
    const order: ('old' | 'new')[] = run % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
    for (const build of order) {
      const f = await fillOnce(build, locks);
      fills.push(f);
      const frozen = f.frozen.length > 0 ? ` (frozen ${f.frozen.join(', ')} ms)` : '';
      console.log([build, f.locks, f.fillMs, f.blockMs, f.over500, f.cpuBlockMs, f.delayMs, f.busyMs, f.workMs, f.gcMs, `${f.stepOuts}${frozen}`].join(' | '));
    }
  }
}
console.log(
  `\nmedians (load average at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
console.log(cols.join(' | '));
for (const locks of sizes) {
  for (const build of ['old', 'new'] as const) {
    const mine = fills.filter((f) => f.build === build && f.locks === locks);
    const m = (k: Exclude<keyof Fill, 'build' | 'frozen'>) => median(mine.map((f) => f[k]));
    const each = (k: 'blockMs' | 'over500' | 'cpuBlockMs' | 'stepOuts') => mine.map((f) => f[k]).join(',');
    const row = [
      m('fillMs'),
      `${m('blockMs')} (${each('blockMs')})`,
      `${m('over500')} (${each('over500')})`,
      `${m('cpuBlockMs')} (${each('cpuBlockMs')})`,
      m('delayMs'),
      m('busyMs'),
      m('workMs'),
      m('gcMs'),
    ];
    console.log([build, locks, ...row, `${m('stepOuts')} (${each('stepOuts')})`].join(' | '));
  }
}
