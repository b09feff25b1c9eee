// The etcd load that the etcd mode's token blocks add (issue 32, design rule 5), on this machine:
// a three-node `baton serve --coordination etcd` cluster on a real three-member etcd (loopback),
// pipelined acquire+release pairs on the active (`--clients` connections, 16 in flight each) for
// `--seconds`, and the compare-and-swaps on `<prefix>/token-ceiling` meanwhile: the key's version
// (one per successful swap) before and after, and etcd's own count of transactions it served
// (all of the node's calls: role keep-alives' confirming reads are ranges, campaigns and in-sync
// writes are transactions). Tokens per second are the pairs per second: one token per grant.
// Usage: node --import tsx bench/etcd-token-load.ts [-- --seconds 30 --clients 50]
import { startCluster, waitFor } from '../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { ETCD_TOKEN_BLOCK } from '../server/coordination/etcd-token-blocks.ts';
import { intFlag } from './flags.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { round } from './stats.ts';

const seconds = intFlag('--seconds', 30, 600);
const clients = intFlag('--clients', 50, 1_000);
const DEPTH = 16;

/** etcd's count of served transactions (all members), from their /metrics. */
async function etcdTxns(etcd: EtcdCluster): Promise<number> {
  let total = 0;
  for (const url of etcd.endpoints) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith('grpc_server_handled_total{') && line.includes('grpc_method="Txn"')) total += Number(line.split(' ').at(-1));
    }
  }
  return total;
}

async function main(): Promise<void> {
  const etcd = await EtcdCluster.start();
  const prefix = `baton-bench/tokens-${process.pid}`;
  const key = `${prefix}/token-ceiling`;
  const cluster = await startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', '2'],
  });
  try {
    await waitFor(async () => (await cluster.node('a').cluster()).phase === 'active', { timeoutMs: 20_000, what: 'a active' });
    const version = async () => Number((await etcd.client().get(key).exec()).kvs[0]?.version ?? 0);
    // Idle first (the same window): what the node's etcd traffic is without grants.
    const idleTxn0 = await etcdTxns(etcd);
    const idleV0 = await version();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
    const idleTxn = (await etcdTxns(etcd)) - idleTxn0;
    const idleSwaps = (await version()) - idleV0;

    const v0 = await version();
    const txn0 = await etcdTxns(etcd);
    const load = await rawKeyedLoad(cluster.node('a').ports.lock, clients, DEPTH, seconds * 1_000);
    const swaps = (await version()) - v0;
    const txns = (await etcdTxns(etcd)) - txn0;
    const perSec = (n: number, ms: number) => round((n * 1_000) / ms);
    const pairsPerSec = perSec(load.pairs, load.elapsedMs);
    console.log(
      JSON.stringify(
        {
          blockSize: ETCD_TOKEN_BLOCK.toString(),
          seconds,
          clients,
          depth: DEPTH,
          idle: { tokenSwapsPerSec: perSec(idleSwaps, seconds * 1_000), etcdTxnPerSec: perSec(idleTxn, seconds * 1_000) },
          load: {
            pairsPerSec,
            tokenSwaps: swaps,
            tokenSwapsPerSec: perSec(swaps, load.elapsedMs),
            expectedSwapsPerSec: round(pairsPerSec / Number(ETCD_TOKEN_BLOCK)),
            etcdTxnPerSec: perSec(txns, load.elapsedMs),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await cluster.close();
    await etcd.close();
  }
}

await main();
