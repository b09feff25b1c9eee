// `--etcd-lag-bound` with real processes: three `baton serve --coordination etcd` nodes on a real
// three-member etcd, the lag bound raised to 2 s and the peer timeout to 6 s. A frozen member
// (SIGSTOP) holds the active's replies until the active takes it out of the in-sync set and etcd
// has stored the set with c in its place. Two rules take it out: its oldest unacked batch older
// than the lag bound, or its heartbeats silent for the peer timeout (its stream is then gone). With
// the peer timeout well above the bound, the bound decides: the reply comes no sooner than 2 s
// after the request (with the default bound, 1 s, after about one), and b is still alive in the
// active's view then. With the default peer timeout (1 s), a frozen member is out after about 1 s
// whatever a higher bound says: the bound matters alone for a member that heartbeats but lags.
import { describe, expect, it } from 'vitest';
import { startCluster } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine } from '../testing/etcd-mode-checks.ts';

const LAG_BOUND_MS = 2_000;
const PEER_TIMEOUT_MS = 6_000;

describe('the etcd mode with --etcd-lag-bound', () => {
  it('a frozen member is taken out of the in-sync set once its oldest unacked batch is older than the bound given, not before', {
    timeout: 90_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/lag-bound-${process.pid}`;
    const cluster = await startCluster({
      peerTimeoutMs: PEER_TIMEOUT_MS,
      extraArgs: [
        ...['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix],
        ...['--etcd-lease-ttl', '2', '--etcd-lag-bound', `${LAG_BOUND_MS / 1_000}s`],
      ],
    });
    await inSyncIs(cluster, 'a', ['b'], 30_000);
    const client = await keyedLine(cluster, 'a');
    client.send('A lag-1 120 0');
    expect(await client.next()).toMatch(/^A lag-1 \d+$/); // b acks: answered

    cluster.node('b').signal('SIGSTOP');
    cluster.defer(() => cluster.node('b').signal('SIGCONT'));
    const sentAt = performance.now();
    client.send('A lag-2 120 0');
    const reply = await client.next(20_000);
    const waitedMs = performance.now() - sentAt;
    expect(reply).toMatch(/^A lag-2 \d+$/);
    // Held for the whole bound (a loaded machine only makes it longer), then b was replaced.
    expect(waitedMs).toBeGreaterThanOrEqual(LAG_BOUND_MS);
    expect(await etcd.client().get(`${prefix}/in-sync`).string()).toBe('["c"]');
    // Taken out by the bound, not by the peer timeout: a still counts b alive.
    const b = (await cluster.node('a').cluster()).nodes.find((n) => n.id === 'b');
    expect(b?.alive, 'b alive in a’s view').toBe(true);
    console.log(`etcd mode, lag bound ${LAG_BOUND_MS} ms: with b frozen, a grant was answered ${Math.round(waitedMs)} ms after its request`);
  });
});
