// What the etcd mode's reply rule costs (docs/cluster.md "Replies in the etcd mode"): the same
// three-node cluster of real `baton serve` processes on loopback in the peers mode and in the
// etcd mode (a real three-member etcd here too), under the same raw keyed load on the active,
// side by side, alternating, median of runs. Per load: pairs/s, the mean time of one pair per
// client (acquire + release, each answered only once both in-sync standbys acked it in the etcd
// mode), and the active's CPU per pair. The load generator, etcd and the standbys share the cores.
// Usage: node --import tsx bench/reply-gate-cost.ts [--seconds 3] [--repeats 3]
import { type Cluster, startCluster, waitFor, waitSettled } from '../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { processCpuMs } from './baton-process.ts';
import { intFlag } from './flags.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { hostMachine } from './report.ts';
import { median, round } from './stats.ts';

const seconds = intFlag('--seconds', 3, 60);
const repeats = intFlag('--repeats', 3, 10);
const LOADS = [
  { clients: 1, depth: 1 },
  { clients: 50, depth: 1 },
  { clients: 50, depth: 16 },
] as const;

interface Run {
  pairsPerSec: number;
  usPerPairPerClient: number;
  activeUsPerPair: number;
}

async function run(cluster: Cluster, clients: number, depth: number): Promise<Run> {
  const a = cluster.node('a');
  const pid = a.pid as number;
  const cpu0 = processCpuMs(pid);
  const r = await rawKeyedLoad(a.ports.lock, clients, depth, seconds * 1_000);
  const cpu = processCpuMs(pid) - cpu0;
  // Each client has `depth` pairs in flight: one pair takes depth / (its pairs per second).
  const perClientPairs = r.pairs / clients;
  return {
    pairsPerSec: Math.round((r.pairs / r.elapsedMs) * 1000),
    usPerPairPerClient: round(((r.elapsedMs * 1000) / perClientPairs) * depth, 1),
    activeUsPerPair: round((cpu * 1000) / r.pairs),
  };
}

async function main(): Promise<void> {
  process.stderr.write('reply-gate-cost: starting etcd and two three-node clusters\n');
  const etcd = await EtcdCluster.start();
  const prefix = `baton-bench/reply-gate-${process.pid}`;
  const peers = await startCluster({ nodes: 3 });
  const etcdMode = await startCluster({
    nodes: 3,
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix],
  });
  try {
    await waitSettled(peers, 'a', 30_000);
    await waitFor(async () => JSON.stringify((await etcdMode.node('a').cluster()).coordination?.inSync) === '["b","c"]', {
      timeoutMs: 30_000,
      what: 'etcd: in-sync [b, c]',
    });
    const setups = [
      { name: 'peers mode', cluster: peers },
      { name: 'etcd mode (in-sync b, c)', cluster: etcdMode },
    ];
    for (const s of setups) await rawKeyedLoad(s.cluster.node('a').ports.lock, 50, 16, 1_500); // warm-up
    const rows: string[] = [];
    for (const load of LOADS) {
      const runs = new Map<string, Run[]>(setups.map((s) => [s.name, []]));
      for (let i = 0; i < repeats; i++) {
        for (const s of setups) {
          const r = await run(s.cluster, load.clients, load.depth);
          process.stderr.write(`reply-gate-cost: ${s.name}, ${load.clients} x ${load.depth}: ${JSON.stringify(r)}\n`);
          runs.get(s.name)?.push(r);
        }
      }
      for (const s of setups) {
        const rs = runs.get(s.name) ?? [];
        const m = (k: keyof Run) => median(rs.map((r) => r[k]));
        rows.push(`| ${s.name} | ${load.clients} x ${load.depth} | ${m('pairsPerSec')} | ${m('usPerPairPerClient')} us | ${m('activeUsPerPair')} us |`);
      }
    }
    const machine = hostMachine();
    console.log(`Machine: ${JSON.stringify(machine)}. Median of ${repeats} runs of ${seconds} s per load.\n`);
    console.log('| mode | clients x in flight each | pairs/s | one pair, per client | active CPU/pair |');
    console.log('|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    await Promise.all([peers.close(), etcdMode.close()]);
    await etcd.close();
  }
}

await main();
