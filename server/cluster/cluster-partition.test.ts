// A partition between peers, made by cutting the fault proxy in front of a's peer port: b and
// c lose a and b promotes while a, cut off, stays active (two actives). When the partition
// heals the two actives see each other and the lower-priority one (b) steps down, redirecting
// its clients to a.
import { describe, expect, it } from 'vitest';
import { LineClient } from '../testing/line-client.ts';
import { activeOf, holderOn, startCluster, waitFor, waitReplicated, waitSettled } from '../testing/cluster-harness.ts';

describe('cluster partition', () => {
  it('makes two actives while cut, and when healed b steps down within peer-timeout + 1 s, a keeping its locks', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ proxied: true });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    const keyed = cluster.keyedClient(['a']);
    const held = await keyed.acquire('partition-held', { lease: 30_000 });
    await waitReplicated(cluster, 'partition-held', held.token, ['b', 'c']);

    a.proxy?.block();
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: cluster.peerTimeoutMs + 2_000, what: 'b to promote' });
    expect((await activeOf(cluster)).sort()).toEqual(['a', 'b']);
    expect((await a.cluster()).nodes.filter((n) => n.id !== 'a').every((n) => !n.alive)).toBe(true);

    // A session client of b's side holds a lock there; b's step-down must end it with a redirect to a.
    const session = await LineClient.open(b.ports.session, '127.0.0.1', { timeoutMs: 5_000 });
    cluster.defer(() => session.close());
    session.send('ACQUIRE partition-session 5000');
    expect(await session.next()).toMatch(/^ACQUIRED \d+$/);

    a.proxy?.heal();
    const healedAt = performance.now();
    await waitFor(
      async () => {
        const actives = await activeOf(cluster);
        return actives.length === 1 && actives[0] === 'a' && (await b.cluster()).phase !== 'active';
      },
      { timeoutMs: cluster.peerTimeoutMs + 1_000, what: 'only a to be active' },
    );
    console.log(`split brain resolved ${Math.round(performance.now() - healedAt)} ms after the heal`);

    expect(await session.closedWith()).toEqual([`REDIRECT ${a.sessionAddress}`]);
    await waitSettled(cluster, 'a', 5_000);
    const view = await a.cluster();
    expect(view.failovers, 'a records the split brain').toContainEqual(expect.objectContaining({ from: 'b', to: 'a', cause: 'split-brain', gapMs: 0 }));
    expect((await holderOn(a, 'partition-held'))?.token).toBe(held.token.toString());
    expect((await holderOn(b, 'partition-held'))?.token).toBe(held.token.toString());
  });
});
