// The etcd mode's reply rule with real processes (docs/cluster.md "Replies in the etcd mode"):
// three `baton serve --coordination etcd` nodes on a real three-member etcd on loopback, with the
// default in-sync bound of one member (b, the highest-priority standby). An active answers only
// once every member of the in-sync set stored in etcd has acked the turn: a frozen member holds
// replies back until the active has stored the set with the other standby in its place; and
// after kill -9 of the active, whichever node wins has every grant any client was told of.
import { describe, expect, it } from 'vitest';
import { type Cluster, holderOn, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine } from '../testing/etcd-mode-checks.ts';

const TTL_S = 2;
let prefixes = 0;

async function startEtcdMode(etcd: EtcdCluster, proxied = false): Promise<{ cluster: Cluster; prefix: string }> {
  const prefix = `baton-test/replies-${process.pid}-${++prefixes}`;
  const cluster = await startCluster({
    proxied,
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S)],
  });
  return { cluster, prefix };
}

describe('the etcd mode: replies wait for the in-sync standbys', () => {
  it('a frozen member holds replies back until the set with the other standby in its place is stored in etcd; then they flow', {
    timeout: 90_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const { cluster, prefix } = await startEtcdMode(etcd);
    await inSyncIs(cluster, 'a', ['b']);
    const kv = etcd.client();
    // What etcd holds as the set, read over and over: [started, ended, value] per read.
    const reads: [number, number, string][] = [];
    let reading = true;
    const poll = (async () => {
      while (reading) {
        const started = performance.now();
        const value = (await kv.get(`${prefix}/in-sync`).string()) ?? 'null';
        reads.push([started, performance.now(), value]);
      }
    })();
    const client = await keyedLine(cluster, 'a');
    client.send('A frozen-1 120 0');
    expect(await client.next()).toMatch(/^A frozen-1 \d+$/); // b acks: answered

    cluster.node('b').signal('SIGSTOP');
    cluster.defer(() => cluster.node('b').signal('SIGCONT'));
    const sentAt = performance.now();
    client.send('A frozen-2 120 0');
    const reply = await client.next(15_000);
    const repliedAt = performance.now();
    reading = false;
    await poll;
    expect(reply).toMatch(/^A frozen-2 \d+$/);
    // The reply came only once etcd no longer named b: no read begun after it shows b (etcd reads
    // are linearizable, so a read begun after the reply sees every write stored before it), and
    // one more read, begun now, shows c in its place. (A read that *ended* before the reply
    // need not have seen it: the reply may overtake a poll read already on its way.)
    expect(reads.filter(([started, , value]) => started > repliedAt && value.includes('"b"'))).toEqual([]);
    expect(await kv.get(`${prefix}/in-sync`).string()).toBe('["c"]');
    // And it waited for the removal: b's unacked batch had to be older than the stall bound
    // (a quarter of the 1 s lag bound, with c healthy to take its place: in-sync-keeper.ts).
    expect(repliedAt - sentAt).toBeGreaterThan(200);
    console.log(
      `etcd mode: with b frozen, a grant was answered ${Math.round(repliedAt - sentAt)} ms after its request (b replaced by c in the in-sync set first)`,
    );
    await inSyncIs(cluster, 'a', ['c']);

    // From then on replies flow with c alone.
    const t0 = performance.now();
    client.send('A frozen-3 120 0');
    expect(await client.next()).toMatch(/^A frozen-3 \d+$/);
    console.log(`etcd mode: the next grant, c alone in the set: ${Math.round(performance.now() - t0)} ms`);
  });

  it('kill -9 of the active right after a burst of grants, one standby cut off: the successor has every grant a client was told of', {
    timeout: 120_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const { cluster } = await startEtcdMode(etcd, true);
    await inSyncIs(cluster, 'a', ['b']);
    // b dials a (the lower priority dials), so what a sends b comes back through a's proxy: held
    // from now on, as a link that stopped delivering one way. Without the rule, a would answer
    // grants b never gets, and b, the next in priority, would win without them.
    cluster.node('a').proxy?.cut({ direction: 'from-target', from: 'b' });
    const client = await keyedLine(cluster, 'a');
    const N = 300;
    for (let i = 0; i < N; i++) client.send(`A burst-${i} 120 0`);
    // The first answers come once c has taken b's place in the set (b's acks stopped); kill -9
    // right after a second burst is sent, so some grants die unanswered.
    await client.until(() => client.lines.length >= N / 2, 20_000, 'half of the first burst answered');
    for (let i = N; i < 2 * N; i++) client.send(`A burst-${i} 120 0`);
    await cluster.node('a').kill9();
    await client.waitClosed(10_000);
    const told = client.lines.filter((l) => l.startsWith('A ')).map((l) => l.split(' '));
    expect(told.length).toBeGreaterThanOrEqual(N / 2);

    const successor = await waitFor(
      async () => {
        for (const id of ['b', 'c']) if ((await cluster.node(id).cluster()).phase === 'active') return id;
        return null;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'a new active' },
    );
    const node = cluster.node(successor);
    for (const [, key, token] of told) expect((await holderOn(node, key as string))?.token, `${key} on ${successor}`).toBe(token);
    // b was taken out of the set before anything it missed was answered: only c could win.
    expect(successor).toBe('c');
    // And no client gets any of them again: every told key is refused at once to a new client.
    const other = await keyedLine(cluster, successor);
    for (const [, key] of told) other.send(`A ${key} 120 0.05`);
    const answers = await other.take(told.length, 20_000);
    expect(answers.filter((l) => !l.startsWith('T '))).toEqual([]);
    console.log(`etcd mode: ${told.length} grants told before kill -9 of a; ${successor} holds every one, none granted again`);
  });
});
