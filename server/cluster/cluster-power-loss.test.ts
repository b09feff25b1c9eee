// A power loss of the active node, made with the fault proxy in front of a's peer port: the
// proxy goes silent (no FIN, no RST: the peers' links to a stay open and say nothing) and a's
// process is killed. b promotes after the peer timeout and grants meanwhile. When a comes back,
// its peers must find it (a silent link is closed and dialled again) before it could promote on
// its own with an empty table; if it ever does promote alone, it must yield to b, which has the
// cluster's state. Either way no lock held on b is lost, and a ends up active again with them.
import { describe, expect, it } from 'vitest';
import { holderOn, startCluster, waitFor, waitReplicated, waitSettled } from '../testing/cluster-harness.ts';

describe('cluster power loss', () => {
  it('a node back from a power loss joins the running cluster instead of serving an empty table', { timeout: 30_000 }, async () => {
    // A short priority-return hold-down (the default is 10 s): the end of this test is a back as the active.
    const cluster = await startCluster({ proxied: true, extraArgs: ['--return-hold-down', '2s'] });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    const before = await cluster.keyedClient(['a']).acquire('power-before', { lease: 30_000 });
    await waitReplicated(cluster, 'power-before', before.token, ['b', 'c']);

    a.proxy?.blackhole();
    await a.kill9();
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: cluster.peerTimeoutMs + 2_000, what: 'b to promote' });
    const during = await cluster.keyedClient(['b']).acquire('power-during', { lease: 30_000 });
    expect(during.token > before.token).toBe(true);
    await waitReplicated(cluster, 'power-during', during.token, ['c']);

    // a starts again. The peers' old connections to it stay silent (as behind a firewall that
    // dropped them): they must give up on them by themselves and dial a anew.
    a.proxy?.forwardNewOnly();
    await a.restart();
    // a ends up active again (priority return after a sync), with both locks.
    await waitFor(
      async () => {
        const view = await a.cluster();
        return view.phase === 'active' && view.failovers.some((f) => f.cause === 'priority-return' && f.to === 'a');
      },
      { timeoutMs: 10_000, what: 'a active again by a priority return' },
    );
    await waitSettled(cluster, 'a', 5_000);
    for (const node of cluster.nodes) {
      expect((await holderOn(node, 'power-before'))?.token, `power-before on ${node.id}`).toBe(before.token.toString());
      expect((await holderOn(node, 'power-during'))?.token, `power-during on ${node.id}`).toBe(during.token.toString());
    }
    // b never stepped down to an a holding an empty table.
    expect(b.logs()).not.toMatch(/split brain: a higher-priority active node is back/);
  });
});
