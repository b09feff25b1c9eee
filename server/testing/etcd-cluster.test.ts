// The three-member etcd cluster the coordination tests stand on: it forms quorum, goes on with one
// member killed, refuses linearizable reads and writes with two killed, and comes back when they
// return; a client behind the fault proxies is cut off and let back in.
import { describe, expect, it } from 'vitest';
import { EtcdCluster } from './etcd-cluster.ts';

async function linearizableGet(cluster: EtcdCluster, key: string, endpoints?: string[]): Promise<string | null> {
  return cluster
    .client(endpoints)
    .get(key)
    .options({ deadline: Date.now() + 1_500 })
    .string();
}

describe('a three-member etcd cluster on loopback', () => {
  it('forms quorum: a write through one member is read through each of the others', async () => {
    const cluster = await EtcdCluster.start();
    const [a, b, c] = cluster.endpoints;
    await cluster
      .client([a as string])
      .put('k')
      .value('v1');
    expect(await linearizableGet(cluster, 'k', [b as string])).toBe('v1');
    expect(await linearizableGet(cluster, 'k', [c as string])).toBe('v1');
  });

  it('goes on with one member killed, and loses quorum (reads and writes refused) with two', async () => {
    const cluster = await EtcdCluster.start();
    await cluster.kill9(0);
    expect(cluster.isRunning(0)).toBe(false);
    // One member down of three: a leader (maybe a new one) and a write, through the two alive.
    await cluster.waitWritable(10_000);
    const alive = [cluster.member(1).clientUrl, cluster.member(2).clientUrl];
    await cluster.client(alive).put('k').value('after-one');
    expect(await linearizableGet(cluster, 'k', alive)).toBe('after-one');

    await cluster.kill9(1);
    const last = [cluster.member(2).clientUrl];
    expect(await cluster.writable(1_500, last)).toBe(false);
    await expect(linearizableGet(cluster, 'k', last)).rejects.toThrow();

    // Quorum returns with a member: the write made with two alive is still there.
    cluster.restart(1);
    await cluster.waitWritable(20_000);
    expect(await linearizableGet(cluster, 'k', last)).toBe('after-one');
  });

  it('cuts a client off etcd through the fault proxies, and lets it back in on heal', async () => {
    const cluster = await EtcdCluster.start();
    const cut = await cluster.proxies();
    expect(await cluster.writable(1_500, cut.endpoints)).toBe(true);
    cut.cut();
    expect(await cluster.writable(1_500, cut.endpoints)).toBe(false);
    // Only that client: the cluster itself is fine.
    expect(await cluster.writable()).toBe(true);
    cut.heal();
    await expect.poll(() => cluster.writable(1_500, cut.endpoints), { timeout: 10_000 }).toBe(true);
  });
});
