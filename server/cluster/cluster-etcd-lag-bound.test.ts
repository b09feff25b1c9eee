// `--etcd-lag-bound` with real processes: three `baton serve --coordination etcd` nodes on a real
// three-member etcd, the lag bound raised to 2 s and the peer timeout to 6 s, so that frozen
// nodes still count as alive and only the in-sync keeper's rules take a member out
// (server/coordination/in-sync-keeper.ts; docs/cluster.md "Replies in the etcd mode"):
// - the member alone frozen, c healthy: it has stalled once its oldest unacked batch is older than
//   a quarter of the bound (500 ms here, 250 ms with the default 1 s), and c takes its place then;
// - both standbys frozen: nobody healthy can take the member's place, so it stays until its lag
//   passes the bound itself (2 s), and then the set is emptied (nobody in sync), replies flow.
// With the default peer timeout (1 s) a frozen member's stream is gone after about 1 s whatever a
// higher bound says: the bound matters alone for a member that heartbeats but lags.
import { describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine } from '../testing/etcd-mode-checks.ts';

const LAG_BOUND_MS = 2_000;
const PEER_TIMEOUT_MS = 6_000;

async function start(name: string): Promise<{ cluster: Cluster; etcd: EtcdCluster; prefix: string }> {
  const etcd = await EtcdCluster.start();
  const prefix = `baton-test/lag-bound-${name}-${process.pid}`;
  const cluster = await startCluster({
    peerTimeoutMs: PEER_TIMEOUT_MS,
    extraArgs: [
      ...['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix],
      ...['--etcd-lease-ttl', '2', '--etcd-lag-bound', `${LAG_BOUND_MS / 1_000}s`],
    ],
  });
  await inSyncIs(cluster, 'a', ['b'], 30_000);
  return { cluster, etcd, prefix };
}

/** Freezes `ids`, asks for one grant on a, and returns how long its reply took. */
async function grantWithFrozen(cluster: Cluster, ids: string[]): Promise<number> {
  const client = await keyedLine(cluster, 'a');
  client.send('A lag-1 120 0');
  expect(await client.next()).toMatch(/^A lag-1 \d+$/); // b acks: answered
  for (const id of ids) {
    cluster.node(id).signal('SIGSTOP');
    cluster.defer(() => cluster.node(id).signal('SIGCONT'));
  }
  const sentAt = performance.now();
  client.send('A lag-2 120 0');
  expect(await client.next(20_000)).toMatch(/^A lag-2 \d+$/);
  return performance.now() - sentAt;
}

async function aliveInViewOfA(cluster: Cluster, id: string): Promise<boolean | undefined> {
  return (await cluster.node('a').cluster()).nodes.find((n) => n.id === id)?.alive;
}

describe('the etcd mode with --etcd-lag-bound', () => {
  it('the member alone frozen: c takes its place once it has stalled for a quarter of the bound given', { timeout: 90_000 }, async () => {
    const { cluster, etcd, prefix } = await start('stall');
    const waitedMs = await grantWithFrozen(cluster, ['b']);
    console.log(`etcd mode, lag bound ${LAG_BOUND_MS} ms, b frozen: a grant was answered ${Math.round(waitedMs)} ms after its request`);
    // Not before the stall bound of this lag bound (the default's would have let it go at 250 ms).
    expect(waitedMs).toBeGreaterThanOrEqual(LAG_BOUND_MS / 4);
    expect(await etcd.client().get(`${prefix}/in-sync`).string()).toBe('["c"]');
    expect(await aliveInViewOfA(cluster, 'b'), 'b alive in a’s view').toBe(true);
  });

  it('both standbys frozen: the member stays until its lag passes the bound given, then the set is emptied and replies flow', {
    timeout: 90_000,
  }, async () => {
    const { cluster, etcd, prefix } = await start('both');
    const waitedMs = await grantWithFrozen(cluster, ['b', 'c']);
    console.log(`etcd mode, lag bound ${LAG_BOUND_MS} ms, b and c frozen: a grant was answered ${Math.round(waitedMs)} ms after its request`);
    // Held for the whole bound (a loaded machine only makes it longer): nobody could take b's place.
    expect(waitedMs).toBeGreaterThanOrEqual(LAG_BOUND_MS);
    expect(await etcd.client().get(`${prefix}/in-sync`).string()).toBe('[]');
    // Taken out by the bound, not by the peer timeout.
    expect(await aliveInViewOfA(cluster, 'b'), 'b alive in a’s view').toBe(true);
  });
});
