// The in-sync set's bound (`--etcd-in-sync 1`, docs/cluster.md "Replies in the etcd mode") with
// real processes: three `baton serve --coordination etcd` nodes on a real three-member etcd on
// loopback. One member only, the highest-priority synced standby (b); c, synced too, stays out,
// so replies wait for b's acks alone. kill -9 of b: the active puts c in its place (c has acked
// everything answered) and answers on; then kill -9 of the active: c, the one node electable,
// takes the role holding every grant a client was told of, and none is granted again. The cost
// of one member: the active and the member lost together leave nobody electable; the operator
// names a surviving standby in the set by hand (docs/cluster.md), and it takes the role.
import { describe, expect, it } from 'vitest';
import { holderOn, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine } from '../testing/etcd-mode-checks.ts';

const TTL_S = 2;

async function startOne(etcd: EtcdCluster, prefix: string) {
  return startCluster({
    extraArgs: [
      ...['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix],
      ...['--etcd-lease-ttl', String(TTL_S), '--etcd-in-sync', '1'],
    ],
  });
}

describe('the etcd mode with an in-sync set of one', () => {
  it('kill -9 of the member: the other standby becomes the member and replies go on; kill -9 of the active: it takes over with every answered grant', {
    timeout: 120_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/in-sync-one-${process.pid}`;
    const cluster = await startOne(etcd, prefix);
    const kv = etcd.client();
    await inSyncIs(cluster, 'a', ['b']);
    // c is synced (a handoff target) but not a member, and stays out while b is fine.
    await waitFor(async () => (await cluster.node('a').cluster()).handoff.targets.includes('c'), { what: 'c a synced standby of a' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await kv.get(`${prefix}/in-sync`).string()).toBe('["b"]');

    const client = await keyedLine(cluster, 'a');
    const N = 100;
    for (let i = 0; i < N; i++) client.send(`A one-${i} 120 0`);
    await client.until(() => client.lines.length >= N, 20_000, 'the first grants answered');

    // The member goes: its stream is gone at once, and c, which has acked everything answered,
    // takes its place through one write. Grants asked meanwhile are answered once etcd stored it.
    await cluster.node('b').kill9();
    for (let i = N; i < 2 * N; i++) client.send(`A one-${i} 120 0`);
    await client.until(() => client.lines.length >= 2 * N, 20_000, 'the grants asked after b died answered');
    await inSyncIs(cluster, 'a', ['c']);
    expect(await kv.get(`${prefix}/in-sync`).string()).toBe('["c"]');
    // More after: replies go on with c alone.
    for (let i = 2 * N; i < 3 * N; i++) client.send(`A one-${i} 120 0`);
    await client.until(() => client.lines.length >= 3 * N, 20_000, 'the grants after c joined answered');
    const told = client.lines.filter((l) => l.startsWith('A ')).map((l) => l.split(' '));
    expect(told).toHaveLength(3 * N);

    await cluster.node('a').kill9();
    await client.waitClosed(10_000);
    await waitFor(async () => (await cluster.node('c').cluster()).phase === 'active', { timeoutMs: 20_000, intervalMs: 50, what: 'c active' });
    const c = cluster.node('c');
    for (const [, key, token] of told) expect((await holderOn(c, key as string))?.token, `${key} on c`).toBe(token);
    const other = await keyedLine(cluster, 'c');
    for (const [, key] of told) other.send(`A ${key} 120 0.05`);
    const answers = await other.take(told.length, 20_000);
    expect(answers.filter((l) => !l.startsWith('T '))).toEqual([]);
    console.log(`etcd mode, in-sync 1: ${told.length} grants told (a third after b's kill -9); c holds every one after a's kill -9, none granted again`);
  });

  it('kill -9 of the active and the member together: nobody takes the role until the operator puts the other standby in the set', {
    timeout: 120_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/in-sync-lost-${process.pid}`;
    const cluster = await startOne(etcd, prefix);
    const kv = etcd.client();
    await inSyncIs(cluster, 'a', ['b']);
    await waitFor(async () => (await cluster.node('a').cluster()).handoff.targets.includes('c'), { what: 'c a synced standby of a' });
    const client = await keyedLine(cluster, 'a');
    for (let i = 0; i < 20; i++) client.send(`A lost-${i} 120 0`);
    await client.until(() => client.lines.length >= 20, 20_000, 'the grants answered');
    const told = client.lines.map((l) => l.split(' '));
    // c has applied them too (it gets the same stream; the operator would check its view).
    await waitFor(async () => (await holderOn(cluster.node('c'), 'lost-19'))?.token === told[19]?.[2], { what: 'c has the last grant' });

    await Promise.all([cluster.node('a').kill9(), cluster.node('b').kill9()]);
    // Past the lease's TTL, etcd's expiry check and every stagger: c, not in the set, does not campaign.
    await new Promise((resolve) => setTimeout(resolve, 3 * TTL_S * 1_000));
    const stuck = await cluster.node('c').cluster();
    expect(stuck.phase).not.toBe('active');
    expect(stuck.coordination?.holder).toBeNull();
    expect(stuck.coordination?.electable).toBe(false);
    expect(await kv.get(`${prefix}/in-sync`).string()).toBe('["b"]');

    // The operator's step: `etcdctl put <prefix>/in-sync '["c"]'`.
    await kv.put(`${prefix}/in-sync`).value('["c"]');
    await waitFor(async () => (await cluster.node('c').cluster()).phase === 'active', { timeoutMs: 15_000, intervalMs: 50, what: 'c active' });
    for (const [, key, token] of told) expect((await holderOn(cluster.node('c'), key as string))?.token, `${key} on c`).toBe(token);
  });
});
