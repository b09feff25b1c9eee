// The etcd mode's role with real processes: three `baton serve --coordination etcd` nodes on a
// real three-member etcd on loopback (server/testing/etcd-cluster.ts). The role follows the key:
// the highest priority takes it at start, a standby takes over after kill -9 of the active within
// about a lease TTL and the stagger, holding every replicated lock.
import { describe, expect, it } from 'vitest';
import { type Cluster, holderOn, startCluster, waitFor, waitReplicated } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';

const TTL_S = 2;
let prefixes = 0;

/** A Baton cluster in the etcd mode on `etcd` (its own key prefix), `a` the only active and every node saying who holds the key. */
async function startEtcdCluster(etcd: EtcdCluster, endpoints: string[] = etcd.endpoints, extra: string[] = []): Promise<Cluster> {
  const prefix = `baton-test/${process.pid}-${++prefixes}`;
  return startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S), ...extra],
  });
}

async function activeIs(cluster: Cluster, id: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(
    async () => {
      for (const node of cluster.nodes.filter((n) => n.running)) {
        const view = await node.cluster();
        const standby = view.phase === 'standby';
        if (node.id === id ? view.phase !== 'active' || view.coordination?.holding !== true : !standby || view.coordination?.holder !== id) return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 50, what: `${id} active and every other node its synced standby` },
  );
}

describe('the etcd mode: the role comes from etcd', () => {
  it('the highest priority becomes active; after kill -9 of it a standby takes over within about a TTL, holding every lock', { timeout: 60_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const cluster = await startEtcdCluster(etcd);
    await activeIs(cluster, 'a');
    const view = await cluster.node('a').cluster();
    expect(view.coordination).toMatchObject({ mode: 'etcd', holding: true, holder: 'a', blocked: null });
    expect(view.coordination?.lease.grantRemainingMs).toBeGreaterThan(0);
    // The synced standbys are the in-sync set (the set etcd stores: the only nodes that may campaign).
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b","c"]', { what: 'in-sync [b, c]' });

    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await keyed.acquire(`etcd-held-${i}`, { lease: 60_000 }));
    for (const g of held) await waitReplicated(cluster, g.key, g.token, ['b', 'c']);

    const killedAt = performance.now();
    await cluster.node('a').kill9();
    await waitFor(async () => (await cluster.node('b').cluster()).phase === 'active', { timeoutMs: 15_000, intervalMs: 20, what: 'b active' });
    const tookMs = performance.now() - killedAt;
    console.log(`etcd mode: b active ${Math.round(tookMs)} ms after kill -9 of a (lease TTL ${TTL_S * 1_000} ms)`);
    // etcd deletes the key a TTL after the last keep-alive (its expiry check runs every 500 ms), then b campaigns after its 150 ms stagger.
    expect(tookMs).toBeLessThan(TTL_S * 1_000 + 500 + 150 + 1_000);
    for (const g of held) expect((await holderOn(cluster.node('b'), g.key))?.token).toBe(g.token.toString());
    await waitFor(async () => (await cluster.node('c').cluster()).coordination?.holder === 'b', { what: 'c sees b hold the key' });
    const next = await keyed.acquire('etcd-after', { lease: 5_000, wait: 5_000 });
    for (const g of held) expect(next.token).toBeGreaterThan(g.token);
  });
});
