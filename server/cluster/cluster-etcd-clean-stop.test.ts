// A whole cluster stopped on purpose in the etcd mode (docs/cluster.md "Stopping the whole
// cluster"), with real processes: three `baton serve --coordination etcd` nodes on a real
// three-member etcd on loopback. The standbys stop first (SIGTERM), then the active, which has
// nobody to hand off to: it deletes the in-sync set and, while a lease it granted still runs,
// leaves a quiet key under an etcd lease that long. Restarted with empty tables, the nodes take
// the role by themselves, not before that lease has run out, and the lock is free then. (After a
// crash of every node, kill -9, nothing is written and an operator decides: cluster-etcd-role.test.ts.)
import { describe, expect, it } from 'vitest';
import { type Cluster, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';

const TTL_S = 2;
// Longer than the stops and restarts take (each stop a 2 s drain): it still runs after them.
const LEASE_MS = 20_000;

/** A new etcd and cluster in the etcd mode: a active, b the in-sync set's one member. */
async function startSettled(name: string) {
  const etcd = await EtcdCluster.start();
  const prefix = `baton-test/${process.pid}-${name}`;
  const cluster = await startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S)],
  });
  const kv = etcd.client();
  await waitFor(async () => (await activeNode(cluster)) === 'a', { what: 'a active' });
  await waitFor(async () => (await kv.get(`${prefix}/in-sync`).string()) === '["b"]', { what: 'in-sync [b]' });
  return { etcd, prefix, cluster, kv };
}

async function activeNode(cluster: Cluster): Promise<string | null> {
  for (const node of cluster.nodes) if ((await node.cluster().catch(() => null))?.phase === 'active') return node.id;
  return null;
}

/** The standbys first, then the active: each a graceful stop that exits 0. */
async function stopAll(cluster: Cluster): Promise<void> {
  expect(await Promise.all([cluster.node('b').sigterm(), cluster.node('c').sigterm()])).toEqual([0, 0]);
  expect(await cluster.node('a').sigterm()).toBe(0);
}

describe('the etcd mode: a whole cluster stopped on purpose', () => {
  it('with no lease running, comes back by itself at once after a restart', { timeout: 90_000 }, async () => {
    const { prefix, cluster, kv } = await startSettled('clean-none');
    await stopAll(cluster);
    expect(await kv.get(`${prefix}/in-sync`).string()).toBeNull();
    expect(await kv.get(`${prefix}/quiet`).string()).toBeNull();
    for (const node of cluster.nodes) await node.restart();
    await waitFor(async () => (await activeNode(cluster)) !== null, { timeoutMs: 20_000, intervalMs: 50, what: 'a node active after the restart' });
  });

  it('with a keyed lease running, nobody takes the role until it has run out; then the lock is free', { timeout: 90_000 }, async () => {
    const { prefix, cluster, kv } = await startSettled('clean-lease');
    const keyed = cluster.keyedClient(['a']);
    // The lease runs from the grant, after this moment: nobody may grant the lock before sentAt + LEASE_MS.
    const sentAt = performance.now();
    const held = await keyed.acquire('clean-stop-held', { lease: LEASE_MS });
    await keyed.close();

    await stopAll(cluster);
    expect(await kv.get(`${prefix}/in-sync`).string()).toBeNull();
    expect(await kv.get(`${prefix}/quiet`).string()).toBe('a');
    await Promise.all(cluster.nodes.map((node) => node.restart()));
    // The restarted nodes read the quiet period and say so; none takes the role meanwhile.
    const quiet = await waitFor(async () => (await cluster.node('b').cluster()).coordination?.quiet ?? null, { what: 'b reads the quiet period' });
    expect(quiet.by).toBe('a');
    expect(quiet.remainingMs).toBeLessThanOrEqual(LEASE_MS);
    expect(await activeNode(cluster)).toBeNull();

    const winner = await waitFor(async () => activeNode(cluster), { timeoutMs: 30_000, intervalMs: 25, what: 'a node active after the quiet period' });
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(LEASE_MS);
    expect(await kv.get(`${prefix}/quiet`).string()).toBeNull();
    const again = cluster.keyedClient([winner]);
    const next = await again.acquire('clean-stop-held', { lease: 1_000, wait: 100 });
    // Tokens come from etcd blocks: the new active's is above every token the old one gave.
    expect(next.token).toBeGreaterThan(held.token);
  });
});
