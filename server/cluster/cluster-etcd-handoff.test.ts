// The etcd mode's handoff through the reply gate's in-sync keeper (docs/cluster.md "Two modes",
// the handoff; "Replies in the etcd mode"), with real processes: three `baton serve
// --coordination etcd` nodes on a real three-member etcd on loopback, with the default in-sync
// bound of one member (b, the highest-priority standby). The handoff narrows the in-sync set
// through the keeper, so the gate stops waiting for the old member once etcd no longer names it:
// a reply the successor acked goes out before the old active follows (then the redirect), even
// when the successor was not a member and the member is frozen. A handoff whose successor dies
// midway is called off: the old active serves on and the keeper stores the set without the dead
// node.
import { describe, expect, it } from 'vitest';
import { type Cluster, holderOn, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine, standbysSynced } from '../testing/etcd-mode-checks.ts';
import type { LineClient } from '../testing/line-client.ts';

const TTL_S = 2;
let prefixes = 0;

async function startEtcdMode(etcd: EtcdCluster): Promise<{ cluster: Cluster; prefix: string }> {
  const prefix = `baton-test/handoff-${process.pid}-${++prefixes}`;
  const cluster = await startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S)],
  });
  return { cluster, prefix };
}

/**
 * Every test's start: a active with b, the one member, in its in-sync set, c synced too (a
 * handoff to c, or a read of c's table, needs c's join to have ended), and a keyed line to a.
 */
async function startWithMemberB(): Promise<{ etcd: EtcdCluster; cluster: Cluster; prefix: string; client: LineClient }> {
  const etcd = await EtcdCluster.start();
  const { cluster, prefix } = await startEtcdMode(etcd);
  await inSyncIs(cluster, 'a', ['b']);
  await standbysSynced(cluster, 'a', ['b', 'c']);
  return { etcd, cluster, prefix, client: await keyedLine(cluster, 'a') };
}

describe('the etcd mode: a handoff through the in-sync keeper', () => {
  it('with the member frozen, a handoff to the other standby: a reply the successor acked is sent before the old active follows, then the redirect', {
    timeout: 90_000,
  }, async () => {
    const { etcd, cluster, prefix, client } = await startWithMemberB();
    client.send('A warm 120 0');
    expect(await client.next()).toMatch(/^A warm \d+$/);

    // b, the one member, stops acking: the next reply waits for it (it is in the stored set,
    // electable) until the keeper replaces it past the stall bound (250 ms, c healthy); the
    // handoff to c, which is not a member but has acked everything answered, races with that, and
    // either way the reply goes out before a follows c.
    cluster.node('b').signal('SIGSTOP');
    cluster.defer(() => cluster.node('b').signal('SIGCONT'));
    client.send('A held 120 0');
    const reply = await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'c' });
    expect(reply).toMatchObject({ status: 200, body: { handoff: { target: 'c' } } });
    // Without the keeper narrowing the set, the gate still waited for b when a followed c, and
    // dropped the reply with its connection: the client saw a close, not an answer.
    const answer = await client.next(10_000);
    expect(answer).toMatch(/^A held \d+$/);
    expect((await holderOn(cluster.node('c'), 'held'))?.token).toBe(answer.split(' ')[2]);
    client.send('A after 120 0');
    expect(await client.next(10_000)).toMatch(/^M 127\.0\.0\.1:\d+$/);
    // etcd named only c and a once the key moved; c, now active, keeps its own set from there.
    expect(await etcd.client().get(`${prefix}/active`).string()).toBe('c');
  });

  it('the successor killed mid-handoff: the handoff is called off, the old active serves on with the set stored without it', { timeout: 90_000 }, async () => {
    const { etcd, cluster, prefix, client } = await startWithMemberB();
    // b frozen with a grant unacked: the handoff narrows the set to b (and a) and waits for its ack.
    cluster.node('b').signal('SIGSTOP');
    client.send('A pending 120 0');
    const handingOff = cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' });
    await waitFor(async () => (await etcd.client().get(`${prefix}/in-sync`).string()) === '["a","b"]', {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'the in-sync set narrowed to a and b',
    });
    await cluster.node('b').kill9();
    const reply = await handingOff;
    expect(reply.status).not.toBe(200);
    // a is still active (it never resigned): the keeper stores the set without b, with c in its
    // place (it acked everything answered), and the grant held for b goes out once c has it.
    await inSyncIs(cluster, 'a', ['c']);
    expect(await etcd.client().get(`${prefix}/in-sync`).string()).toBe('["c"]');
    expect(await etcd.client().get(`${prefix}/active`).string()).toBe('a');
    const answer = await client.next(10_000);
    expect(answer).toMatch(/^A pending \d+$/);
    expect((await holderOn(cluster.node('c'), 'pending'))?.token).toBe(answer.split(' ')[2]);
    client.send('A next 120 0');
    const next = await client.next(10_000);
    expect(next).toMatch(/^A next \d+$/);
    expect((await holderOn(cluster.node('c'), 'next'))?.token).toBe(next.split(' ')[2]);
    const view = await cluster.node('a').cluster();
    expect(view.coordination?.electable).toBe(true);
  });

  it('the successor frozen after it acked everything: the key is resigned, no promotion comes, the old active wins it back and keeps the set with the gate', {
    timeout: 90_000,
  }, async () => {
    const { etcd, cluster, prefix, client } = await startWithMemberB();
    client.send('A before 120 0');
    expect(await client.next()).toMatch(/^A before \d+$/);
    // Quiet: b has acked everything; frozen now, it gets the handoff message but never promotes.
    cluster.node('b').signal('SIGSTOP');
    cluster.defer(() => cluster.node('b').signal('SIGCONT'));
    const reply = await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' });
    expect(reply.status).not.toBe(200);
    // a resigned, then campaigned again (the set named a and b) and won: it answers with c in the set.
    await inSyncIs(cluster, 'a', ['c']);
    expect(await etcd.client().get(`${prefix}/active`).string()).toBe('a');
    client.send('A again 120 0');
    const again = await client.next(10_000);
    expect(again).toMatch(/^A again \d+$/);
    expect((await holderOn(cluster.node('c'), 'again'))?.token).toBe(again.split(' ')[2]);
    // b thawed follows a and takes c's place in the set again (the higher priority, once synced).
    cluster.node('b').signal('SIGCONT');
    await inSyncIs(cluster, 'a', ['b'], 20_000);
    client.send('A last 120 0');
    expect(await client.next(10_000)).toMatch(/^A last \d+$/);
  });
});
