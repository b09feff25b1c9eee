// `npm run bench:cluster`: what the cluster costs and how fast it fails over, on this machine,
// with real `baton serve` processes on loopback (the load generator shares the cores).
//   1. Server CPU per acquire+release pair on the active node: a single node (no --config)
//      against the active of a 2-node and a 3-node cluster (replicating every event), the same
//      load (50 raw keyed connections, pipelined 16) side by side, alternating, median of runs;
//      plus each standby's own CPU per pair, and the replication lag seen during the load.
//   2. Failover: kill -9 of the active to a standby's phase `active` (polled every 10 ms), and
//      the no-active gap of graceful handoffs by the API and by SIGTERM (the successor's figure).
//   3. A standby joining an active with --join-locks locks (1,000,000) under --join-rate pairs/s
//      (2,000) of handover churn: time to in sync, the active's longest event-loop block,
//      handover p99 during the join, RSS of both (sections/join-section.ts).
//   4. Holders (about 30 s): 1,000 resumable session leases and 1,000 keyed grants through a
//      graceful handoff and then a kill -9 of the active: how many kept their token, were lost
//      or saw their work aborted (sections/holders-section.ts).
// Usage: npm run bench:cluster [-- --seconds 4 --repeats 3 --only cost,failover,join,holders --join-locks 1000000 --join-rate 2000]
import { pidOf } from './cluster-nodes.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { ClusterView } from '../lib/ops-api/api-types.ts';
import { startCluster, waitSettled } from '../server/testing/cluster-harness.ts';
import { processCpuMs, startBaton } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { failoverSection } from './sections/failover-section.ts';
import { median, round } from './stats.ts';
import { joinSection } from './sections/join-section.ts';
import { holdersSection } from './sections/holders-section.ts';
import { exitWithUsageOnHelp, intFlag, listFlag } from './flags.ts';
import { hostMachine } from './report.ts';

exitWithUsageOnHelp(import.meta.url);

const seconds = intFlag('--seconds', 4, 60);
const repeats = intFlag('--repeats', 3, 10);
const only = listFlag('--only', ['cost', 'failover', 'join', 'holders'] as const);
const joinLocks = intFlag('--join-locks', 1_000_000, 5_000_000);
const joinRate = intFlag('--join-rate', 2_000, 50_000);

interface CostRun {
  pairsPerSec: number;
  activeUsPerPair: number;
  standbyUsPerPair: number | null;
  maxLagEvents: number | null;
  maxLagMs: number | null;
}

async function load(lockPort: number, pids: number[], lagOf: (() => Promise<ClusterView>) | null): Promise<CostRun> {
  const cpu0 = pids.map(processCpuMs);
  let maxLagEvents: number | null = lagOf === null ? null : 0;
  let maxLagMs: number | null = lagOf === null ? null : 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling && lagOf !== null) {
      await new Promise((r) => setTimeout(r, 200));
      const view = await lagOf().catch(() => null);
      for (const n of view?.nodes ?? []) {
        if (n.replicationLag === null) continue;
        maxLagEvents = Math.max(maxLagEvents ?? 0, n.replicationLag.events);
        maxLagMs = Math.max(maxLagMs ?? 0, n.replicationLag.ms);
      }
    }
  })();
  const r = await rawKeyedLoad(lockPort, 50, 16, seconds * 1_000);
  sampling = false;
  await sampler;
  const cpu = pids.map((pid, i) => processCpuMs(pid) - (cpu0[i] as number));
  const perPair = (ms: number) => round((ms * 1000) / r.pairs);
  const standbys = cpu.slice(1);
  return {
    pairsPerSec: Math.round((r.pairs / r.elapsedMs) * 1000),
    activeUsPerPair: perPair(cpu[0] as number),
    standbyUsPerPair: standbys.length === 0 ? null : perPair(Math.max(...standbys)),
    maxLagEvents,
    maxLagMs,
  };
}

function medians(runs: CostRun[]): Record<keyof CostRun, number | null> {
  const pick = (k: keyof CostRun) => {
    const values = runs.map((r) => r[k]).filter((v): v is number => v !== null);
    return values.length === 0 ? null : k.startsWith('maxLag') ? Math.max(...values) : median(values);
  };
  return {
    pairsPerSec: pick('pairsPerSec'),
    activeUsPerPair: pick('activeUsPerPair'),
    standbyUsPerPair: pick('standbyUsPerPair'),
    maxLagEvents: pick('maxLagEvents'),
    maxLagMs: pick('maxLagMs'),
  };
}

async function costFigures() {
  const single = await startBaton();
  const two = await startCluster({ nodes: 2 });
  const three = await startCluster({ nodes: 3 });
  try {
    await Promise.all([waitSettled(two, 'a'), waitSettled(three, 'a')]);
    const setups = [
      { name: 'single node', port: single.lockPort, pids: [single.child.pid as number], lag: null },
      { name: 'active + 1 standby', port: two.node('a').ports.lock, pids: [pidOf(two, 'a'), pidOf(two, 'b')], lag: () => two.node('a').cluster() },
      {
        name: 'active + 2 standbys',
        port: three.node('a').ports.lock,
        pids: [pidOf(three, 'a'), pidOf(three, 'b'), pidOf(three, 'c')],
        lag: () => three.node('a').cluster(),
      },
    ];
    for (const s of setups) await rawKeyedLoad(s.port, 50, 16, 1_500); // warm-up
    const runs = new Map<string, CostRun[]>(setups.map((s) => [s.name, []]));
    for (let i = 0; i < repeats; i++) {
      for (const s of setups) runs.get(s.name)?.push(await load(s.port, s.pids, s.lag));
    }
    return setups.map((s) => ({ setup: s.name, ...medians(runs.get(s.name) ?? []) }));
  } finally {
    await Promise.all([single.stop(), two.close(), three.close()]);
  }
}

const machine = hostMachine();
const cost = only.includes('cost') ? await costFigures() : null;
const failover = only.includes('failover') ? await failoverSection(repeats) : null;
const join = only.includes('join') ? await joinSection(joinLocks, joinRate) : null;
const holders = only.includes('holders') ? await holdersSection() : null;
console.log(
  `Baton cluster figures (${machine.cores} cores, ${machine.cpu}, Node ${machine.node}; ${repeats} runs, ${seconds} s per load run, peer-timeout 1 s)\n`,
);
if (cost !== null) {
  console.log('| setup (50 raw keyed connections, pipelined 16) | pairs/s | active CPU/pair | standby CPU/pair | max replication lag |\n|---|---|---|---|---|');
  const base = cost[0]?.activeUsPerPair ?? Number.NaN;
  for (const c of cost) {
    const ratio = c.activeUsPerPair === null ? '' : ` (${round(c.activeUsPerPair / base, 2)}x)`;
    const lag = c.maxLagEvents === null ? '-' : `${c.maxLagEvents} events, ${c.maxLagMs} ms`;
    console.log(
      `| ${c.setup} | ${c.pairsPerSec} | ${c.activeUsPerPair} us${ratio} | ${c.standbyUsPerPair ?? '-'}${c.standbyUsPerPair === null ? '' : ' us'} | ${lag} |`,
    );
  }
}
if (failover !== null) {
  console.log('\n| failover (3 nodes on loopback) | median | min | max | runs |\n|---|---|---|---|---|');
  const rows: [string, { median: number; min: number; max: number; n: number }][] = [
    ['kill -9 of the active → standby active (client-side poll, 10 ms)', failover.killPromotionMs],
    ['kill -9: gap on the timeline (last heartbeat → promoted)', failover.killGapMs],
    ['API handoff: gap with no active node', failover.apiHandoffGapMs],
    ['SIGTERM handoff: gap with no active node', failover.sigtermHandoffGapMs],
  ];
  for (const [name, s] of rows) console.log(`| ${name} | ${s.median} ms | ${s.min} ms | ${s.max} ms | ${s.n} |`);
}
if (join !== null) {
  console.log(`\n| standby joins ${join.locks} locks under ${join.pairsPerSec} pairs/s of churn | figure |\n|---|---|`);
  console.log(`| time to in sync (b's "following" → "synced" log lines) | ${join.inSyncMs} ms (${join.parts} parts) |`);
  console.log(
    `| active's longest event-loop block during the join (per-second max) | ${join.activeMaxLoopDelayMs} ms (${join.activeLoopDelayMs.join(', ')}) |`,
  );
  console.log(`| active's longest GC pause in the same seconds | ${Math.max(...join.activeGcPauseMs)} ms (${join.activeGcPauseMs.join(', ')}) |`);
  console.log(
    `| standby's longest event-loop block; GC pause (per second, same seconds) | ${join.standbyLoopDelayMs.join(', ')}; GC ${join.standbyGcPauseMs.join(', ')} |`,
  );
  console.log(
    `| longest block in CPU time of the loop's thread (loopBusyMs; less GC: loopWorkMs), per second | active ${Math.max(...join.activeBusyMs)} ms (${join.activeBusyMs.join(', ')}; work ${join.activeWorkMs.join(', ')}); standby ${Math.max(...join.standbyBusyMs)} ms (${join.standbyBusyMs.join(', ')}; work ${join.standbyWorkMs.join(', ')}) |`,
  );
  console.log(
    `| active's longest snapshot slice (walk + encode + send, its log) | ${join.longestSliceMs} ms (${join.drainWaits} waits for the link to drain) |`,
  );
  console.log(
    `| baseline: same churn, ${join.baseline.loopDelayMs.length} s before the join: longest block; GC; handover p99 | ${join.baseline.maxLoopDelayMs} ms (${join.baseline.loopDelayMs.join(', ')}); GC ${Math.max(...join.baseline.gcPauseMs)} ms; p99 ${join.baseline.handoverP99Ms} ms (${join.baseline.handovers} handovers) |`,
  );
  console.log(
    `| handover during the join, client-side (release sent → queued grant) | p50 ${join.handoverP50Ms} ms, p99 ${join.handoverP99Ms} ms, max ${join.handoverMaxMs} ms (${join.handovers} handovers) |`,
  );
  console.log(`| the standby's peer link went down during the join (a cut-off standby starts over) | ${join.standbyLinkDowns} times |`);
  console.log(`| churn during the join | ${join.churnPairsDuringJoin} pairs, ${join.unexpectedReplies} unexpected replies |`);
  console.log(`| failovers during the join; active's phases seen | ${join.failovers}; ${join.activePhases.join(', ')} |`);
  console.log(
    `| RSS once in sync (peak) | active ${join.rssMiB.active} MiB (${join.rssMiB.activePeak}), standby ${join.rssMiB.standby} MiB (${join.rssMiB.standbyPeak}) |`,
  );
  console.log(`| (fill of the table before the join) | ${join.fillSeconds} s |`);
}
if (holders !== null) {
  const h = holders;
  const n = (x: number | undefined) => (x === undefined ? '-' : String(x));
  // "lost": the lock on the new active is held by another token or by nobody (or could not be read).
  const lost = (c: { changed: number; missing: number; unread: number }) =>
    `${c.changed + c.missing + c.unread}${c.changed + c.unread > 0 ? ` (${c.changed} other token, ${c.missing} free${c.unread > 0 ? `, ${c.unread} unread` : ''})` : ''}`;
  const row = (event: string, r: typeof h.handoff) => {
    const f = r.failover;
    const claims =
      f === null ? 'no entry' : `${n(f.claimsCarried)} / ${n(f.claimsResumed)} / ${n(f.claimsExpired)}${f.claimsEnded ? ` (${f.claimsEnded} ended)` : ''}`;
    const between =
      r.lastReconnectingAtMs === null ? 'none seen' : `peak ${r.reconnectingPeak}, from +${r.firstReconnectingAtMs} to +${r.lastReconnectingAtMs} ms`;
    const gap = f === null ? '-' : `${round(f.gapMs, 1)} ms (${f.cause})`;
    console.log(
      `| ${event} | ${r.node} (${f?.cause === 'crash' ? 'active' : 'settled'} at +${Math.round(r.activeAfterMs)} ms) | ${r.sessions.same} / ${lost(r.sessions)} / ${r.sessions.aborted} | ${r.sessions.resumed} / ${r.sessions.reconnecting}; ${between} | ${r.keyed.same} / ${lost(r.keyed)} | ${gap} | ${claims} |`,
    );
  };
  console.log(
    `\n${h.sessions} session holders (resumable, ${h.sessionLeaseMs / 1000} s lease) and ${h.keyed} keyed holders (${h.keyedLeaseMs / 1000} s lease) on 3 nodes; locks read on the new active; ${h.replicatedOnB.sessions} + ${h.replicatedOnB.keyed} of them read on b with the same token before the handoff\n`,
  );
  console.log(
    '| event | new active | session holders: same token / lost / aborted | sessions on a connection / still reconnecting at the reading; between connections (5 ms polls) | keyed holders: same token / lost | gap with no active | session claims carried / resumed / expired |\n|---|---|---|---|---|---|---|',
  );
  row(`graceful handoff a → b (read at +${h.handoff.atMs} ms)`, h.handoff);
  row(`kill -9 of b (read at +${h.kill.atMs} ms)`, h.kill);
  console.log(
    `| keyed releases at the end | | | | ${h.release.ok} OK, ${h.release.stale} STALE, ${h.release.errors} errors${h.release.errorMessages.length > 0 ? ` (${h.release.errorMessages.join('; ')})` : ''} | | |`,
  );
  console.log(
    `\n(opened ${h.sessions} sessions in ${h.openMs.sessions} ms, took ${h.keyed} grants in ${h.openMs.keyed} ms; the section took ${round(h.totalMs / 1000, 1)} s; ${h.aborts.length} lease aborts${
      h.aborts.length > 0
        ? `: ${h.aborts
            .slice(0, 5)
            .map((x) => `${x.name} at ${x.atMs} ms after the handoff (${x.reason})`)
            .join('; ')}`
        : ''
    })`,
  );
  if (h.logNotes.length > 0) process.stderr.write(`bench: holders: node log notes:\n${h.logNotes.join('\n')}\n`);
}
const dir = new URL('./results/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
// Each part to its own file, so a run of one section does not wipe the others' last figures.
if (cost !== null || failover !== null)
  writeFileSync(`${dir}cluster-latest.json`, `${JSON.stringify({ machine, seconds, repeats, cost, failover }, null, 2)}\n`);
if (join !== null) writeFileSync(`${dir}cluster-join-latest.json`, `${JSON.stringify({ machine, join }, null, 2)}\n`);
if (holders !== null) writeFileSync(`${dir}cluster-holders-latest.json`, `${JSON.stringify({ machine, date: new Date().toISOString(), holders }, null, 2)}\n`);
