// `npm run bench:etcd-mode`: the default (peers) mode and etcd mode (issue 32) side by side in
// one run, each a three-node `baton serve` cluster on loopback, with a three-member etcd on
// loopback for the etcd one (the load generator, etcd and both clusters share the cores; the
// idle cluster's cost is in the other's figures, both ways). Figures:
//   1. keyed acquire+release pairs/s and server CPU per pair (the active's, and the two standbys'
//      together), 50 clients on distinct keys at 1 and 16 pairs in flight each (as `npm run bench`
//      section 1), and one client at 1 in flight (with its ms per pair): runs alternate between the
//      modes, median of repeats;
//   2. handover p99: 50 clients looping on one key (bench/handover-load.ts), alternating;
//   3. etcd requests/s that the etcd-mode cluster adds, from etcd's own /metrics (gRPC messages
//      received by all members, by method; raft proposals committed): idle, and under the
//      50 x 16 load;
// The load average is printed with the figures: on a shared machine they move with it.
//   4. failover after kill -9 of the active: kill -> a standby reports phase active (polled every
//      10 ms), per mode, with the peer timeout and the etcd lease TTL.
// `--in-sync 1,2` runs one etcd-mode cluster per in-sync bound (`--etcd-in-sync`), all in the same
// alternating rounds, so the bounds are compared side by side too (each against the default
// mode); absent, one etcd-mode cluster with the node's default bound. They share one etcd: its
// idle figure is every etcd-mode cluster's together.
// Usage: npm run bench:etcd-mode [-- --seconds 4 --repeats 3 --ttl 2 --failovers 3 --idle 10 --in-sync 1,2]
import { pidOf, theActive } from './cluster-nodes.ts';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Cluster, startCluster, waitFor, waitSettled } from '../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { processCpuMs } from './baton-process.ts';
import { etcdRates, type EtcdRates, readEtcdCounters } from './etcd-requests.ts';
import { etcdModeName, formatEtcdModeReport, type EtcdModeResults, type LoadRow, type ModeName } from './etcd-mode-report.ts';
import { exitWithUsageOnHelp, intFlag, intListFlag } from './flags.ts';
import { runHandover } from './handover-load.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { hostMachine } from './report.ts';
import { median, percentile, round } from './stats.ts';
import { batonRawKeyed } from './systems/baton-raw-keyed.ts';

exitWithUsageOnHelp(import.meta.url);

const seconds = intFlag('--seconds', 4, 60);
const repeats = intFlag('--repeats', 3, 10);
const ttlS = intFlag('--ttl', 2, 30);
const failovers = intFlag('--failovers', 3, 10);
const idleS = intFlag('--idle', 10, 120);
// Empty: one etcd-mode cluster with the node's own default bound.
const inSyncBounds: Array<number | null> = process.argv.includes('--in-sync') ? intListFlag('--in-sync', [], 4) : [null];
const PEER_TIMEOUT_MS = 1_000;
// As section 1 of `npm run bench` (50 clients on distinct keys, 1 or 16 pairs in flight each),
// and one lone connection with one pair at a time: what a single request waits for (the reply
// gate's round trip to the standbys shows there undiluted).
const LOADS = [
  { label: '50 clients, 1 in flight', clients: 50, depth: 1 },
  { label: '50 clients, 16 in flight', clients: 50, depth: 16 },
  { label: '1 client, 1 in flight', clients: 1, depth: 1 },
] as const;
const UNDER_LOAD = '50 clients, 16 in flight';
const HANDOVER_CLIENTS = 50;

async function pairsRun(cluster: Cluster, load: (typeof LOADS)[number], etcd: EtcdCluster | null): Promise<LoadRow & { etcd: EtcdRates | null }> {
  const active = await theActive(cluster);
  const standbys = cluster.nodes.filter((n) => n.id !== active).map((n) => pidOf(cluster, n.id));
  const activePid = pidOf(cluster, active);
  const cpu0 = [processCpuMs(activePid), ...standbys.map(processCpuMs)];
  const e0 = etcd === null ? null : await readEtcdCounters(etcd);
  const r = await rawKeyedLoad(cluster.node(active).ports.lock, load.clients, load.depth, seconds * 1_000);
  const e1 = etcd === null ? null : await readEtcdCounters(etcd);
  const cpu1 = [processCpuMs(activePid), ...standbys.map(processCpuMs)];
  const d = cpu1.map((c, i) => c - (cpu0[i] ?? 0));
  const pairs = Math.max(1, r.pairs);
  return {
    load: load.label,
    pairsPerSec: round(r.pairs / (r.elapsedMs / 1_000), 0),
    msPerPair: round((r.elapsedMs * load.clients * load.depth) / pairs, 3),
    activeUsPerPair: round(((d[0] ?? 0) * 1_000) / pairs, 2),
    standbysUsPerPair: round((d.slice(1).reduce((s, x) => s + x, 0) * 1_000) / pairs, 2),
    etcd: e0 === null || e1 === null ? null : etcdRates(e0, e1),
  };
}

async function handoverRun(cluster: Cluster): Promise<number> {
  const active = await theActive(cluster);
  const pid = pidOf(cluster, active);
  const h = await runHandover(
    batonRawKeyed(cluster.node(active).ports.lock, () => processCpuMs(pid)),
    HANDOVER_CLIENTS,
    seconds * 1_000,
  );
  return h.p99Ms;
}

/** kill -9 of the active; ms until another node says it is active. Then the killed node comes back and takes its place back. */
async function failoverRun(cluster: Cluster): Promise<number> {
  const active = await theActive(cluster);
  await waitSettled(cluster, active, 30_000);
  const victim = cluster.node(active);
  const others = cluster.nodes.filter((n) => n !== victim);
  const killedAt = performance.now();
  await victim.kill9();
  await waitFor(async () => (await Promise.all(others.map((n) => n.cluster().catch(() => null)))).some((v) => v?.phase === 'active'), {
    timeoutMs: 60_000,
    intervalMs: 10,
    what: 'a standby active after the kill -9',
  });
  const ms = performance.now() - killedAt;
  await victim.restart();
  await waitSettled(cluster, 'a', 60_000);
  return ms;
}

const etcd = await EtcdCluster.start();
const clusters: Record<ModeName, Cluster> = {
  default: await startCluster({ nodes: 3, peerTimeoutMs: PEER_TIMEOUT_MS, extraArgs: ['--return-hold-down', '1s'] }),
};
for (const n of inSyncBounds) {
  clusters[etcdModeName(n)] = await startCluster({
    nodes: 3,
    peerTimeoutMs: PEER_TIMEOUT_MS,
    extraArgs: ['--return-hold-down', '1s', ...(n === null ? [] : ['--etcd-in-sync', String(n)])],
    etcd: { cluster: etcd, prefix: `baton/bench-etcd-mode-${n ?? 'default'}`, leaseTtlS: ttlS },
  });
}
const modes: ModeName[] = Object.keys(clusters);
const cluster = (m: ModeName): Cluster => {
  const c = clusters[m];
  if (c === undefined) throw new Error(`no cluster for ${m}`);
  return c;
};
const stopAll = async () => {
  for (const c of Object.values(clusters)) await c.close();
  await etcd.close();
};
process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
try {
  for (const m of modes) await waitSettled(cluster(m), 'a', 30_000);
  process.stderr.write('bench: etcd mode vs default: idle etcd load\n');
  const idle0 = await readEtcdCounters(etcd);
  await new Promise((r) => setTimeout(r, idleS * 1_000));
  const idle = etcdRates(idle0, await readEtcdCounters(etcd));
  const rows: Record<ModeName, Record<string, Array<LoadRow & { etcd: EtcdRates | null }>>> = Object.fromEntries(modes.map((m) => [m, {}]));
  const handoverP99: Record<ModeName, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
  for (let i = 0; i < repeats; i++) {
    // Alternate the order each round, so neither mode always runs on the warmer machine.
    for (const m of i % 2 === 0 ? modes : [...modes].reverse()) {
      for (const load of LOADS) {
        process.stderr.write(`bench: round ${i + 1}/${repeats} ${m} ${load.label}\n`);
        const row = await pairsRun(cluster(m), load, m === 'default' ? null : etcd);
        const byLoad = rows[m] ?? {};
        (byLoad[load.label] ??= []).push(row);
        rows[m] = byLoad;
      }
      process.stderr.write(`bench: round ${i + 1}/${repeats} ${m} handover\n`);
      handoverP99[m]?.push(await handoverRun(cluster(m)));
    }
  }
  const failoverMs: Record<ModeName, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
  const failoverErrors: Record<ModeName, string[]> = Object.fromEntries(modes.map((m) => [m, []]));
  for (let i = 0; i < failovers; i++) {
    for (const m of modes) {
      const errors = failoverErrors[m] ?? [];
      if (errors.length > 0) continue;
      process.stderr.write(`bench: failover ${i + 1}/${failovers} ${m}\n`);
      try {
        failoverMs[m]?.push(await failoverRun(cluster(m)));
      } catch (error) {
        // A cluster that did not come back is a result too: said, with its nodes' logs kept.
        const dir = mkdtempSync(join(tmpdir(), `baton-bench-etcd-mode-${m.replace(/\W+/g, '-')}-`));
        for (const n of cluster(m).nodes) writeFileSync(join(dir, `node-${n.id}.log`), `${n.tail(0)}\n${n.logs()}`);
        errors.push(`${error instanceof Error ? error.message : String(error)} (node logs: ${dir})`);
        failoverErrors[m] = errors;
        process.stderr.write(`bench: failover ${m} failed: ${errors.at(-1)}\n`);
      }
    }
  }
  const medianRow = (list: Array<LoadRow & { etcd: EtcdRates | null }>): LoadRow => ({
    load: list[0]?.load ?? '',
    pairsPerSec: median(list.map((r) => r.pairsPerSec)),
    msPerPair: median(list.map((r) => r.msPerPair)),
    activeUsPerPair: median(list.map((r) => r.activeUsPerPair)),
    standbysUsPerPair: median(list.map((r) => r.standbysUsPerPair)),
  });
  // Under load: the first etcd-mode cluster's 50 x 16 runs (the others idle meanwhile).
  const underLoad = (rows[modes[1] ?? '']?.[UNDER_LOAD] ?? []).map((r) => r.etcd).filter((e) => e !== null);
  const results: EtcdModeResults = {
    machine: hostMachine(),
    loadAverage: loadavg().map((x) => round(x, 1)),
    date: new Date().toISOString(),
    seconds,
    repeats,
    peerTimeoutMs: PEER_TIMEOUT_MS,
    etcdLeaseTtlS: ttlS,
    modes,
    pairs: Object.fromEntries(modes.map((m) => [m, LOADS.map((l) => medianRow(rows[m]?.[l.label] ?? []))])),
    handoverP99Ms: Object.fromEntries(modes.map((m) => [m, round(median(handoverP99[m] ?? []), 3)])),
    failoverMs: Object.fromEntries(
      modes.map((m) => {
        const runs = failoverMs[m] ?? [];
        return [
          m,
          {
            median: runs.length === 0 ? null : round(median(runs), 0),
            max: runs.length === 0 ? null : round(percentile(runs, 100), 0),
            runs: runs.map((x) => round(x, 0)),
            errors: failoverErrors[m] ?? [],
          },
        ];
      }),
    ),
    etcdIdle: idle,
    etcdUnderLoad: underLoad.length === 0 ? null : (underLoad.sort((x, y) => x.requestsPerSec - y.requestsPerSec)[Math.floor(underLoad.length / 2)] ?? null),
  };
  const md = formatEtcdModeReport(results);
  console.log(md);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/etcd-mode-latest.json', `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync('bench/results/etcd-mode-latest.md', `${md}\n`);
  console.log('written: bench/results/etcd-mode-latest.json, bench/results/etcd-mode-latest.md');
} finally {
  await stopAll();
}
