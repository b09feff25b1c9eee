// `npm run bench:etcd-turns`: where the etcd mode's pipelined gap comes from (issue 32). Two
// three-node `baton serve` clusters on loopback, the default mode and the etcd mode with
// `--etcd-in-sync 1` (a three-member etcd on loopback, lease TTL 2 s), both up for the whole run;
// the raw keyed load (bench/raw-keyed-load.ts: clients on distinct keys, `--depth` pairs in
// flight each) runs on each active in turn, the order flipping each round. Per mode and run it
// prints pairs/s and, per pair done, each node's CPU (µs), read and write syscalls
// (/proc/PID/io) and voluntary and involuntary context switches (/proc/PID/status), the load
// generator's and etcd's CPU, and how idle the machine was (/proc/stat); then the medians per
// mode and etcd against the default round by round.
// `--period-ms 0` (the default) is the closed loop: each client sends its next batch as soon as
// the last one is answered, so each mode runs as fast as it can. `--period-ms N` paces each
// client to one batch per N ms (bench/raw-keyed-load.ts says how), so both modes get the same
// offered rate and their CPU per pair compares at equal work; `--period-ms 10,0` runs both loads
// in the same alternating rounds.
// Everything shares the machine's cores: the idle cluster's small cost is in the other's figures.
// Results: bench/results/etcd-turns-latest.{json,md}.
// Usage: npm run bench:etcd-turns [-- --seconds 4 --repeats 3 --clients 50 --depth 16 --period-ms 0]
import { pidOf, theActive } from './cluster-nodes.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { type Cluster, startCluster, waitSettled } from '../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { processCpuMs } from './baton-process.ts';
import { formatTurnsReport, medianRun, type PerPair, type TurnsMode, type TurnsResults, type TurnsRun } from './etcd-turns-report.ts';
import { exitWithUsageOnHelp, intFlag, intListFlag } from './flags.ts';
import { idlePercent, machineTicks, type ProcessCounters, processCounters } from './proc-counters.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { hostMachine } from './report.ts';
import { round } from './stats.ts';

exitWithUsageOnHelp(import.meta.url);

const seconds = intFlag('--seconds', 4, 60);
const repeats = intFlag('--repeats', 3, 10);
const clients = intFlag('--clients', 50, 1_000);
const depth = intFlag('--depth', 16, 256);
const periodsMs = intListFlag('--period-ms', [0], 10_000, 0);
const IN_SYNC = 1;
const LEASE_TTL_S = 2;
const MODES: readonly TurnsMode[] = ['default', 'etcd'];

function perPair(before: ProcessCounters, after: ProcessCounters, pairs: number): PerPair {
  return {
    us: round(((after.cpuMs - before.cpuMs) * 1_000) / pairs, 2),
    reads: round((after.reads - before.reads) / pairs, 4),
    writes: round((after.writes - before.writes) / pairs, 4),
    voluntary: round((after.voluntary - before.voluntary) / pairs, 5),
    involuntary: round((after.involuntary - before.involuntary) / pairs, 5),
  };
}

async function run(cluster: Cluster, etcd: EtcdCluster, mode: TurnsMode, periodMs: number, roundNo: number): Promise<TurnsRun> {
  const active = await theActive(cluster);
  const pids = [pidOf(cluster, active), ...cluster.nodes.filter((n) => n.id !== active).map((n) => pidOf(cluster, n.id))];
  const etcdPids = etcd.pids;
  const etcdCpu = () => etcdPids.reduce((s, p) => s + processCpuMs(p), 0);
  const e0 = etcdCpu();
  const m0 = machineTicks();
  const g0 = process.cpuUsage();
  const n0 = pids.map(processCounters);
  const r = await rawKeyedLoad(cluster.node(active).ports.lock, clients, depth, seconds * 1_000, periodMs);
  const n1 = pids.map(processCounters);
  const g = process.cpuUsage(g0);
  const m1 = machineTicks();
  const e1 = etcdCpu();
  const pairs = Math.max(1, r.pairs);
  return {
    round: roundNo,
    mode,
    periodMs,
    pairsPerSec: round(r.pairs / (r.elapsedMs / 1_000), 0),
    nodes: n0.map((before, i) => perPair(before, n1[i] ?? before, pairs)),
    generatorUs: round((g.user + g.system) / pairs, 2),
    etcdUs: round(((e1 - e0) * 1_000) / pairs, 2),
    idlePct: round(idlePercent(m0, m1), 1),
    loadAverage1: round(loadavg()[0] ?? 0, 1),
  };
}

const etcd = await EtcdCluster.start();
const common = { nodes: 3, peerTimeoutMs: 1_000, extraArgs: ['--return-hold-down', '1s'] };
const clusters: Record<TurnsMode, Cluster> = {
  default: await startCluster(common),
  etcd: await startCluster({
    ...common,
    extraArgs: [...common.extraArgs, '--etcd-in-sync', String(IN_SYNC)],
    etcd: { cluster: etcd, prefix: 'baton/bench-etcd-turns', leaseTtlS: LEASE_TTL_S },
  }),
};
const stopAll = async () => {
  for (const c of Object.values(clusters)) await c.close();
  await etcd.close();
};
process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
try {
  for (const m of MODES) await waitSettled(clusters[m], 'a', 30_000);
  const runs: TurnsRun[] = [];
  for (let i = 0; i < repeats; i++) {
    for (const periodMs of periodsMs) {
      // The order flips each round, so neither mode always runs on the warmer machine.
      for (const m of i % 2 === 0 ? MODES : [...MODES].reverse()) {
        const load = periodMs === 0 ? 'closed loop' : `paced ${periodMs} ms`;
        process.stderr.write(`bench: round ${i + 1}/${repeats} ${load} ${m}: `);
        const r = await run(clusters[m], etcd, m, periodMs, i + 1);
        process.stderr.write(`${r.pairsPerSec} pairs/s, active ${r.nodes[0]?.us} µs/pair, idle ${r.idlePct} %\n`);
        runs.push(r);
      }
    }
  }
  const results: TurnsResults = {
    machine: hostMachine(),
    loadAverage: loadavg().map((x) => round(x, 1)),
    date: new Date().toISOString(),
    seconds,
    repeats,
    clients,
    depth,
    periodsMs,
    etcdInSync: IN_SYNC,
    etcdLeaseTtlS: LEASE_TTL_S,
    runs,
    medians: periodsMs.flatMap((p) => MODES.map((m) => medianRun(runs, m, p))),
  };
  const md = formatTurnsReport(results);
  console.log(md);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/etcd-turns-latest.json', `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync('bench/results/etcd-turns-latest.md', `${md}\n`);
  console.log('written: bench/results/etcd-turns-latest.json, bench/results/etcd-turns-latest.md');
} finally {
  await stopAll();
}
