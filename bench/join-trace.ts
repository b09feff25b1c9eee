// A standby joining a large table, watched as it goes: a 2-node cluster (peer-timeout 1 s), `a`
// filled with --locks locks (600 s leases) under 2,000 pairs/s of handover churn, then `b`
// started. Prints b's phase and replication lag as they change, the warnings both nodes log
// (freezes, cut-off streams, the partial-table hold) and b's GC pauses over --gc-ms (wall, from
// --trace-gc: set for the baton processes only), then each side's per-second figures of the
// join: longest block in CPU time (loopBusyMs), the same less GC (loopWorkMs), GC pauses and wall
// delay. For what the scale section's join part does not show: why a join of millions starts over.
// --kill: then kill -9 of `a` (bench/join-kill.ts: the kill to b's first grant, and the locks kept).
// --cpu-prof: CPU profiles of both nodes over the join (bench/join-cpu-prof.mjs).
// --no-churn: the churn stops before b starts (after its 3 s baseline), so the join's blocks are
//   measured with the load generator idle: what the two nodes' own work costs on this machine's
//   two cores, without the third process (issue 29: "a run where the load generator is paused").
//   node --import tsx bench/join-trace.ts --locks 5000000 [--timeout-s 600] [--gc-ms 150] [--kill] [--cpu-prof] [--no-churn]
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, waitFor, type NodeProcess } from '../server/testing/cluster-harness.ts';
import { fillLocks, startChurn } from '../server/testing/lock-load.ts';
import { exitWithUsageOnHelp, intFlag } from './flags.ts';
import { killAndTakeOver } from './join-kill.ts';
import { PEER_TIMEOUT_MS } from './sections/failover-section.ts';

exitWithUsageOnHelp(import.meta.url);

const locks = intFlag('--locks', 1_000_000, 20_000_000);
const timeoutMs = intFlag('--timeout-s', 600, 7_200) * 1_000;
const gcMs = intFlag('--gc-ms', 150, 60_000);
const kill = process.argv.includes('--kill');
const cpuProf = process.argv.includes('--cpu-prof');
const noChurn = process.argv.includes('--no-churn');
const preload = (file: string) => ` --import ${fileURLToPath(new URL(file, import.meta.url))}`;
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''}${preload('./trace-gc.mjs')}${cpuProf ? preload('./join-cpu-prof.mjs') : ''}`.trim();
if (cpuProf) {
  process.env.JOIN_CPU_PROF_DIR = mkdtempSync(join(tmpdir(), 'join-prof-'));
  console.log(`CPU profiles of a and b at the end of the join: ${process.env.JOIN_CPU_PROF_DIR}`);
}

const rssMiB = (node: NodeProcess): number => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${node.pid}/status`, 'utf8'))?.[1]) / 1024);

const cluster = await startCluster({ nodes: 2, start: ['a'], peerTimeoutMs: PEER_TIMEOUT_MS, teardownGraceMs: 5_000, startTimeoutMs: 30_000 });
const [a, b] = [cluster.node('a'), cluster.node('b')];
try {
  await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a active alone' });
  const f0 = performance.now();
  await fillLocks(a.ports.lock, locks, 'bench/join');
  console.log(`filled ${locks} locks in ${Math.round(performance.now() - f0)} ms; RSS a ${rssMiB(a)} MiB`);
  const churn = await startChurn(a.ports.lock, 2_000);
  await new Promise((r) => setTimeout(r, 3_000));
  const t0 = performance.now();
  // Handovers before the join (the baseline) and during it, by index into the churn's list.
  const handoversAtStart = churn.live.handoverMs.length;
  const at = () => `${Math.round(performance.now() - t0)} ms`;
  if (noChurn) {
    await churn.stop();
    console.log('churn stopped for the join (--no-churn)');
  }
  await b.start();
  let last = '';
  const seen = { gc: 0, a: 0, b: 0 };
  // The views keep 60 seconds: a longer join's maxima are kept here, from the last two seconds of each look.
  const longest = { activeBusy: 0, activeWork: 0, standbyBusy: 0, standbyWork: 0 };
  const recent = (xs?: number[]) => Math.max(0, ...(xs ?? []).slice(-2));
  await waitFor(
    async () => {
      const [va, vb] = [await a.cluster().catch(() => null), await b.cluster().catch(() => null)];
      const state = `b ${vb?.phase ?? 'not answering'}, lag ${JSON.stringify(va?.nodes.find((n) => n.id === 'b')?.replicationLag ?? null)}`;
      if (state !== last) console.log(`${at()}: ${state}`);
      longest.activeBusy = Math.max(longest.activeBusy, recent(va?.loopBusyMs));
      longest.activeWork = Math.max(longest.activeWork, recent(va?.loopWorkMs));
      longest.standbyBusy = Math.max(longest.standbyBusy, recent(vb?.loopBusyMs));
      longest.standbyWork = Math.max(longest.standbyWork, recent(vb?.loopWorkMs));
      last = state;
      const lines = b.stdout().split('\n');
      for (const line of lines.slice(seen.gc)) {
        const pause = /, ([\d.]+) \/ [\d.]+ ms/.exec(line);
        if (pause !== null && Number(pause[1]) > gcMs) console.log(`  b gc: ${line.slice(0, 200)}`);
      }
      seen.gc = lines.length;
      for (const [id, node] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const entries = node.logEntries();
        for (const e of entries.slice(seen[id]))
          if (Number(e.level) >= 40) console.log(`  ${id} log: ${String(e.msg).slice(0, 120)} ${JSON.stringify(e).slice(0, 160)}`);
        seen[id] = entries.length;
      }
      return va?.nodes.find((n) => n.id === 'b')?.inSync === true;
    },
    { timeoutMs, intervalMs: 250, what: 'b in sync' },
  );
  const joinMs = performance.now() - t0;
  const handoversAtSync = churn.live.handoverMs.length;
  if (cpuProf) for (const node of [a, b]) if (node.pid !== undefined) process.kill(node.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 1_200));
  if (!noChurn) await churn.stop();
  const seconds = Math.ceil(joinMs / 1_000) + 2;
  const [va, vb] = [await a.cluster(), await b.cluster()];
  console.log(`in sync after ${Math.round(joinMs)} ms; RSS a ${rssMiB(a)} MiB, b ${rssMiB(b)} MiB`);
  const r = (x: number) => Math.round(x * 10) / 10;
  const ms2 = (x: number) => x.toFixed(2);
  const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;
  const during = churn.live.handoverMs.slice(handoversAtStart, handoversAtSync);
  const before = churn.live.handoverMs.slice(0, handoversAtStart);
  console.log(
    `handover during the join: p50 ${ms2(pct(during, 0.5))} / p99 ${ms2(pct(during, 0.99))} / max ${ms2(pct(during, 1))} ms (${during.length}); the 3 s before: p99 ${ms2(pct(before, 0.99))} ms (${before.length})`,
  );
  console.log(
    `longest block in CPU time over the whole join: active ${r(longest.activeBusy)} ms (less GC ${r(longest.activeWork)}), standby ${r(longest.standbyBusy)} ms (less GC ${r(longest.standbyWork)})`,
  );
  for (const [side, v] of [
    ['active', va],
    ['standby', vb],
  ] as const) {
    const w = (xs?: number[]) => (xs ?? []).slice(-seconds).map(Math.round);
    console.log(`${side}, the last ${Math.min(seconds, 60)} s:`);
    console.log(
      `  busy [${w(v.loopBusyMs).join(',')}]\n  work [${w(v.loopWorkMs).join(',')}]\n  gc   [${w(v.gcPauseMs).join(',')}]\n  wall [${w(v.loopDelayMs).join(',')}]`,
    );
  }
  if (kill) {
    // The join's garbage settled, as a standby at rest would meet the kill.
    await new Promise((r) => setTimeout(r, 3_000));
    const k = await killAndTakeOver(a, b, locks, 'bench/join');
    console.log(
      `kill -9 of a holding ${k.heldBefore} locks: b's first grant ${r(k.firstGrantMs)} ms after the kill (peer timeout + 200 ms = ${PEER_TIMEOUT_MS + 200}); gap on b's timeline ${r(k.gapMs)} ms; b holds ${k.heldAfter} of them; ${k.sampleKept}/${k.sample} sampled locks with the same token`,
    );
    const vb2 = await b.cluster();
    console.log(
      `b after the kill: busy [${(vb2.loopBusyMs ?? []).slice(-6).map(Math.round).join(',')}] work [${(vb2.loopWorkMs ?? []).slice(-6).map(Math.round).join(',')}] gc [${(vb2.gcPauseMs ?? []).slice(-6).map(Math.round).join(',')}]`,
    );
  }
} finally {
  await cluster.close();
}
