// The etcd mode's tokens with real processes (design rule 5): three `baton serve --coordination
// etcd` nodes on a real three-member etcd. Tokens come only from blocks reserved in etcd, so a
// successor's first token is above every token the dead active issued and above the etcd ceiling,
// even one written by hand far above anything the peers knew.
import { describe, expect, it } from 'vitest';
import { type Cluster, startCluster, waitFor, waitReplicated } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';

const TTL_S = 2;
/** Far above one reservation's reach of anything the peers have seen (ceiling-guard.ts: 6,400,000). */
const BY_HAND = 50_000_000n;

async function startEtcdCluster(etcd: EtcdCluster, prefix: string): Promise<Cluster> {
  return startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S)],
  });
}

async function activeIs(cluster: Cluster, id: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      const view = await cluster.node(id).cluster();
      return view.phase === 'active' && view.coordination?.holding === true;
    },
    { timeoutMs, intervalMs: 20, what: `${id} active, holding the role key` },
  );
}

describe('the etcd mode: tokens from etcd blocks', () => {
  it('after kill -9 of the active, the successor’s first token is above every token it issued and above a ceiling written by hand', {
    timeout: 90_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/tokens-${process.pid}`;
    const ceilingKey = `${prefix}/token-ceiling`;
    const cluster = await startEtcdCluster(etcd, prefix);
    await activeIs(cluster, 'a');
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b","c"]', { what: 'in-sync [b, c]' });

    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const issued: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const g = await keyed.acquire(`etcd-tokens-${i}`, { lease: 60_000 });
      issued.push(g.token);
      if (i % 2 === 0) await keyed.release(g.key, g.token);
    }
    const last = issued.at(-1) as bigint;
    await waitReplicated(cluster, 'etcd-tokens-19', last, ['b', 'c']);
    // a's tokens came from a block reserved in etcd: its ceiling is at or above each of them.
    const reserved = BigInt((await etcd.client().get(ceilingKey).string()) ?? '0');
    expect(reserved).toBeGreaterThanOrEqual(last);
    // An operator (or a lost node's history) put the ceiling far above anything the peers know.
    await etcd.client().put(ceilingKey).value(BY_HAND.toString());

    await cluster.node('a').kill9();
    await activeIs(cluster, 'b');
    const next = await keyed.acquire('etcd-tokens-after', { lease: 5_000, wait: 10_000 });
    expect(next.token).toBeGreaterThan(BY_HAND);
    for (const t of issued) expect(next.token).toBeGreaterThan(t);
    // The etcd ceiling covers the successor's block too.
    expect(BigInt((await etcd.client().get(ceilingKey).string()) ?? '0')).toBeGreaterThanOrEqual(next.token);
    // The standby left takes the new active's tokens, jump and all (re-synced if its guard refused the stream).
    await waitReplicated(cluster, 'etcd-tokens-after', next.token, ['c'], 20_000);
  });
});
