// What a client with default settings sees through a crash of the active node: KeyedClient
// given every node's address, a withLock loop every 50 ms. No acquire may fail (each waits up
// to 10 s), and locks are taken again as soon as a standby has promoted: the connections that
// were on the dead node come home at once, and a standby that still names the dead node is
// asked again 200 ms later, not after the 3 s reconnect interval.
import { describe, expect, it } from 'vitest';
import { KeyedClient } from '../../lib/client/index.ts';
import { startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';

describe('a client through a failover', () => {
  it('KeyedClient with default settings takes locks again right after the promotion, with no error', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const client = new KeyedClient({ addresses: cluster.lockAddresses() });
    cluster.defer(() => client.close());
    const errors: string[] = [];
    const successes: number[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          await client.withLock('client-through-failover', { lease: 10_000, wait: 10_000 }, async () => {});
          successes.push(performance.now());
        } catch (error) {
          errors.push(String(error));
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await waitFor(() => (successes.length >= 5 ? true : null), { timeoutMs: 5_000, what: 'locks taken before the kill' });
    const killedAt = performance.now();
    await cluster.node('a').kill9();
    await waitFor(async () => ((await cluster.node('b').cluster()).phase === 'active' ? true : null), { timeoutMs: 5_000, what: 'b active' });
    const promotedAt = performance.now();
    await waitFor(() => (successes.some((t) => t > promotedAt) ? true : null), { timeoutMs: 5_000, what: 'a lock taken after the promotion' });
    running = false;
    await loop;
    const firstAfter = (successes.find((t) => t > killedAt) ?? Number.NaN) - promotedAt;
    console.log(`first lock after the kill: ${Math.round(firstAfter)} ms after b promoted`);
    expect(errors).toEqual([]);
    // Well under the 3 s reconnect interval that used to leave the client with no connection.
    expect(firstAfter).toBeLessThan(1_500);
  });
});
