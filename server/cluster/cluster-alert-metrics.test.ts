// The cluster series the alert rules read (ops/prometheus/baton-alerts.yml), on real `baton serve`
// processes: each node's priority, the active's view of which standby is in sync, the tokens
// left in each node's slot, the failovers each node recorded, and peer links refused for
// authentication; every node's /metrics promtool-clean with them.
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN } from '../../lib/tokens/token-source.ts';
import { TOKEN_SLOTS } from '../../lib/tokens/token-slots.ts';
import { type NodeProcess, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';
import { promtoolCheckMetrics } from '../testing/promtool.ts';
import { sample } from '../testing/metrics-text.ts';

async function scrape(node: NodeProcess): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${node.ports.http}/metrics`);
  if (res.status !== 200) throw new Error(`node ${node.id}: /metrics answered ${res.status}`);
  return res.text();
}

describe('cluster series on /metrics', () => {
  it('give each node its priority, the active its in-sync standbys, and each slot its tokens left', { timeout: 60_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a', 10_000);
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];
    const texts = await Promise.all([a, b, c].map((n) => scrape(n)));
    texts.forEach((text, priority) => {
      expect(sample(text, 'baton_node_priority'), `priority of node ${priority}`).toBe(priority);
    });
    const [onA, onB, onC] = texts as [string, string, string];
    expect(sample(onA, 'baton_peer_in_sync{node="b"}')).toBe(1);
    expect(sample(onA, 'baton_peer_in_sync{node="c"}')).toBe(1);
    expect(sample(onA, 'baton_peer_in_sync{node="a"}')).toBeUndefined();
    for (const standby of [onB, onC]) expect(standby).not.toMatch(/^baton_peer_in_sync/m);
    // A fresh node's slot: one block in 64 of the u64.
    for (const text of texts) {
      const left = sample(text, 'baton_tokens_remaining') as number;
      expect(left).toBeGreaterThan(Number(MAX_TOKEN / BigInt(TOKEN_SLOTS)) * 0.99);
      expect(left).toBeLessThan(Number(MAX_TOKEN / BigInt(TOKEN_SLOTS)) * 1.01);
      expect(sample(text, 'baton_peer_auth_refused_total')).toBe(0);
      const { code, output } = await promtoolCheckMetrics(text);
      expect(output).toBe('');
      expect(code).toBe(0);
    }

    // A standby that dies is out of sync on the active.
    await c.kill9();
    await waitFor(async () => sample(await scrape(a), 'baton_peer_in_sync{node="c"}') === 0, {
      timeoutMs: cluster.peerTimeoutMs + 3_000,
      what: 'a to see c out of sync',
    });
    expect(sample(await scrape(a), 'baton_peer_in_sync{node="b"}')).toBe(1);

    // The active dies: b takes over and records the failover (nobody recorded the start-up).
    for (const text of texts) expect(sample(text, 'baton_failovers_recorded_total{cause="crash"}')).toBe(0);
    await a.kill9();
    await waitFor(async () => sample(await scrape(b), 'baton_failovers_recorded_total{cause="crash"}') === 1, {
      timeoutMs: cluster.peerTimeoutMs + 3_000,
      what: 'b to record the failover',
    });
    expect(sample(await scrape(b), 'baton_failovers_recorded_total{cause="api-handoff"}')).toBe(0);
  });

  it('count peer connections refused for authentication on both sides', { timeout: 60_000 }, async () => {
    const cluster = await startCluster({ nodes: 2, adminTokens: { b: 'another-admin-token-for-this-one-node-0123456789' } });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    // b dials a every 150 ms and is refused each time: the counters climb on both sides.
    await waitFor(async () => (sample(await scrape(a), 'baton_peer_auth_refused_total') ?? 0) >= 2, { timeoutMs: 10_000, what: 'a to count refusals' });
    await waitFor(async () => (sample(await scrape(b), 'baton_peer_auth_refused_total') ?? 0) >= 2, { timeoutMs: 10_000, what: 'b to count refusals' });
  });
});
