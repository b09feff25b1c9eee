// The etcd mode's role with real processes: three `baton serve --coordination etcd` nodes on a
// real three-member etcd on loopback (server/testing/etcd-cluster.ts). The role follows the key:
// the highest priority takes it at start, a standby takes over after kill -9 of the active within
// about a lease TTL and the stagger, holding every replicated lock.
import { describe, expect, it } from 'vitest';
import { activeOf, type Cluster, holderOn, startCluster, timeline, waitFor, waitReplicated } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';

const TTL_S = 2;
let prefixes = 0;

/** A Baton cluster in the etcd mode on `etcd` (its own key prefix), `a` the only active and every node saying who holds the key. */
async function startEtcdCluster(
  etcd: EtcdCluster,
  endpoints: string[] = etcd.endpoints,
  extra: string[] = [],
  prefix = `baton-test/${process.pid}-${++prefixes}`,
): Promise<Cluster> {
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
  it('the highest priority becomes active; after kill -9 of it the in-sync member (b) takes over within about a TTL, holding every lock', {
    timeout: 60_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const cluster = await startEtcdCluster(etcd);
    await activeIs(cluster, 'a');
    const view = await cluster.node('a').cluster();
    expect(view.coordination).toMatchObject({ mode: 'etcd', holding: true, holder: 'a', blocked: null });
    expect(view.coordination?.lease.grantRemainingMs).toBeGreaterThan(0);
    // The highest-priority synced standby is the in-sync set (the set etcd stores: the only nodes
    // that may win the role; one member with the default --etcd-in-sync 1).
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b"]', { what: 'in-sync [b]' });

    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const held = [];
    for (let i = 0; i < 5; i++) held.push(await keyed.acquire(`etcd-held-${i}`, { lease: 60_000 }));
    for (const g of held) await waitReplicated(cluster, g.key, g.token, ['b', 'c']);

    const killedAt = performance.now();
    await cluster.node('a').kill9();
    // Only b: the in-sync set is [b], so c may not win (it need not have every grant a answered).
    const successor = await waitFor(
      async () => {
        for (const id of ['b', 'c']) if ((await cluster.node(id).cluster()).phase === 'active') return id;
        return null;
      },
      { timeoutMs: 15_000, intervalMs: 20, what: 'b or c active' },
    );
    expect(successor).toBe('b');
    const other = 'c';
    const tookMs = performance.now() - killedAt;
    console.log(`etcd mode: ${successor} active ${Math.round(tookMs)} ms after kill -9 of a (lease TTL ${TTL_S * 1_000} ms)`);
    // etcd deletes the key a TTL after the last keep-alive (its expiry check runs every 500 ms), then b campaigns after its 150 ms stagger.
    expect(tookMs).toBeLessThan(TTL_S * 1_000 + 500 + 300 + 1_000);
    for (const g of held) expect((await holderOn(cluster.node(successor), g.key))?.token).toBe(g.token.toString());
    await waitFor(async () => (await cluster.node(other).cluster()).coordination?.holder === successor, { what: `${other} sees ${successor} hold the key` });
    const next = await keyed.acquire('etcd-after', { lease: 5_000, wait: 5_000 });
    for (const g of held) expect(next.token).toBeGreaterThan(g.token);
  });

  it('a handoff by the API moves the role key to the target; a restore hands it back by priority, through etcd too', { timeout: 90_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const cluster = await startEtcdCluster(etcd, etcd.endpoints, ['--return-hold-down', '2s']);
    await activeIs(cluster, 'a');
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const held = await keyed.acquire('etcd-handoff', { lease: 60_000 });
    await waitReplicated(cluster, 'etcd-handoff', held.token, ['b', 'c']);
    const a = cluster.node('a');
    const b = cluster.node('b');

    const reply = await a.post('/api/v1/cluster/handoff', { target: 'b' });
    expect(reply).toMatchObject({ status: 200, body: { handoff: { target: 'b' } } });
    await activeIs(cluster, 'b');
    const view = await b.cluster();
    expect(timeline(view)).toEqual(['a->b api-handoff']);
    console.log(`etcd mode handoff gap (API): ${view.failovers.at(-1)?.gapMs} ms`);
    expect((await holderOn(b, 'etcd-handoff'))?.token).toBe(held.token.toString());
    // a yielded: it stays a standby (the key is b's; a does not campaign while b holds it).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await activeOf(cluster)).toEqual(['b']);

    expect((await b.post('/api/v1/cluster/restore', {})).status).toBe(200);
    await activeIs(cluster, 'a');
    const back = await a.cluster();
    expect(timeline(back)).toEqual(['a->b api-handoff', 'b->a priority-return']);
    expect((await holderOn(a, 'etcd-handoff'))?.token).toBe(held.token.toString());
    expect(await keyed.release('etcd-handoff', held.token)).toBe(true);
  });

  it('on SIGTERM the active hands the role key to a standby and exits 0', { timeout: 60_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const cluster = await startEtcdCluster(etcd);
    await activeIs(cluster, 'a');
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const held = await keyed.acquire('etcd-sigterm', { lease: 60_000 });
    await waitReplicated(cluster, 'etcd-sigterm', held.token, ['b', 'c']);
    const stoppedAt = performance.now();
    expect(await cluster.node('a').sigterm()).toBe(0);
    await waitFor(async () => (await cluster.node('b').cluster()).phase === 'active', { timeoutMs: 10_000, what: 'b active' });
    // A handoff, not a wait for the lease to expire.
    const view = await cluster.node('b').cluster();
    expect(timeline(view)).toEqual(['a->b signal']);
    console.log(
      `etcd mode handoff on SIGTERM: b active ${Math.round(performance.now() - stoppedAt)} ms after the signal; gap ${view.failovers.at(-1)?.gapMs} ms`,
    );
    expect((await holderOn(cluster.node('b'), 'etcd-sigterm'))?.token).toBe(held.token.toString());
  });

  it('after the whole cluster stopped, no node with an empty table takes the role until an operator deletes the in-sync set', { timeout: 90_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/${process.pid}-restart`;
    const cluster = await startEtcdCluster(etcd, etcd.endpoints, [], prefix);
    await activeIs(cluster, 'a');
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b"]', { what: 'in-sync [b]' });
    for (const node of cluster.nodes) await node.kill9();
    for (const node of cluster.nodes) await node.restart();
    // Past the old lease's TTL, the start-up wait and every stagger: the set names b and c, whose tables are gone.
    await new Promise((resolve) => setTimeout(resolve, 3 * TTL_S * 1_000));
    // Nobody took the role. A node restarted while the old active's key still stood (its lease not
    // yet expired) follows that name and asks it for a snapshot (syncing, with an empty table);
    // one restarted after it sees nobody (discovering): both wait, on a loaded machine either.
    for (const node of cluster.nodes) {
      const view = await node.cluster();
      expect(['discovering', 'syncing']).toContain(view.phase);
      expect(view.coordination?.holder).toBeNull();
    }
    await etcd.client().delete().key(`${prefix}/in-sync`);
    // Any of them may win now (the role key has been absent for a while, so no stagger orders
    // them: the first to read the set gone campaigns), and the others follow it.
    const winner = await waitFor(
      async () => {
        for (const node of cluster.nodes) if ((await node.cluster()).phase === 'active') return node.id;
        return null;
      },
      { timeoutMs: 10_000, what: 'a node active' },
    );
    await activeIs(cluster, winner);
  });
});
