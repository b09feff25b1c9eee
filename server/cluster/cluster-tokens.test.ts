// Fencing tokens only ever go up, whatever happens to the cluster: a restart of every node
// (graceful or kill -9) with the same data dirs, and two crashes in a row that leave the
// lowest-priority node alone. Each test records every token issued before and checks that the
// first token issued after is above all of them.
import { describe, expect, it } from 'vitest';
import type { KeyedClient } from '../../lib/client/index.ts';
import { startCluster, timeline, waitFor, waitReplicated, waitSettled, type Cluster } from '../testing/cluster-harness.ts';

const LEASE_MS = 30_000;

/** Acquires `count` locks named `<prefix>-<i>`, releasing every other one; returns every token issued. */
async function issue(keyed: KeyedClient, prefix: string, count: number): Promise<bigint[]> {
  const tokens: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const grant = await keyed.acquire(`${prefix}-${i}`, { lease: LEASE_MS, wait: 5_000 });
    tokens.push(grant.token);
    if (i % 2 === 0) expect(await grant.release()).toBe(true);
  }
  // The same name again, after its release: a token from the same running block, not a reuse.
  const again = await keyed.acquire(`${prefix}-0`, { lease: LEASE_MS, wait: 5_000 });
  tokens.push(again.token);
  return tokens;
}

const max = (tokens: bigint[]) => tokens.reduce((m, t) => (t > m ? t : m), 0n);

async function waitActive(cluster: Cluster, id: string, timeoutMs = 5_000): Promise<void> {
  await waitFor(async () => (await cluster.node(id).cluster()).phase === 'active', { timeoutMs, what: `${id} to be active` });
}

/** Restarts every node at once with the same ports and data dirs, and waits for a to serve with in-sync standbys. */
async function restartAll(cluster: Cluster): Promise<void> {
  const startedAt = performance.now();
  await Promise.all(cluster.nodes.map((n) => n.restart()));
  await waitSettled(cluster, 'a', 5_000);
  console.log(`whole cluster restarted and settled in ${Math.round(performance.now() - startedAt)} ms`);
}

describe('tokens across a restart of the whole cluster', () => {
  it('after SIGTERM of all three nodes (each exits 0), the first new token is above every earlier one', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const before = await issue(keyed, 'tokens-term', 6);
    await waitReplicated(cluster, 'tokens-term-0', before.at(-1) as bigint, ['b', 'c']);

    const stoppingAt = performance.now();
    const codes = await Promise.all(cluster.nodes.map((n) => n.sigterm(10_000)));
    console.log(`all three exited ${Math.round(performance.now() - stoppingAt)} ms after SIGTERM, codes ${codes.join(', ')}`);
    expect(codes).toEqual([0, 0, 0]);
    await restartAll(cluster);

    const after = await keyed.acquire('tokens-term-after', { lease: LEASE_MS, wait: 5_000 });
    console.log(`max token before: ${max(before)}, first after the restart: ${after.token}`);
    expect(after.token).toBeGreaterThan(max(before));
  });

  it('after kill -9 of all three nodes, the first new token is above every earlier one', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const before = await issue(keyed, 'tokens-kill', 6);
    await waitReplicated(cluster, 'tokens-kill-0', before.at(-1) as bigint, ['b', 'c']);

    await Promise.all(cluster.nodes.map((n) => n.kill9()));
    await restartAll(cluster);

    const after = await keyed.acquire('tokens-kill-after', { lease: LEASE_MS, wait: 5_000 });
    console.log(`max token before: ${max(before)}, first after the restart: ${after.token}`);
    expect(after.token).toBeGreaterThan(max(before));
  });
});

describe('tokens across two crashes in a row', () => {
  it('kill -9 of a (b promotes), then of b (c promotes): a token issued by c is above every token of a and b', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const byA = await issue(keyed, 'tokens-a', 4);
    await waitReplicated(cluster, 'tokens-a-0', byA.at(-1) as bigint, ['b', 'c']);

    await a.kill9();
    await waitActive(cluster, 'b');
    await waitSettled(cluster, 'b');
    const byB = await issue(keyed, 'tokens-b', 4);
    for (const token of byB) expect(token).toBeGreaterThan(max(byA));
    await waitReplicated(cluster, 'tokens-b-0', byB.at(-1) as bigint, ['c']);

    await b.kill9();
    await waitActive(cluster, 'c');
    const onC = await keyed.acquire('tokens-c', { lease: LEASE_MS, wait: 5_000 });
    console.log(`max token of a: ${max(byA)}, of b: ${max(byB)}, first of c: ${onC.token}`);
    expect(onC.token).toBeGreaterThan(max([...byA, ...byB]));
    expect(timeline(await c.cluster())).toEqual(['a->b crash', 'b->c crash']);
  });
});
