// Standbys send clients to the active: `M <lock addr>` on the keyed protocol (on connect and
// in reply to every request), `REDIRECT <session addr>` on the session protocol. Both client
// classes follow them.
import { describe, expect, it } from 'vitest';
import { LineClient } from '../testing/line-client.ts';
import { holderOn, startCluster, waitSettled, type Cluster } from '../testing/cluster-harness.ts';

async function raw(cluster: Cluster, port: number): Promise<LineClient> {
  const client = await LineClient.open(port, '127.0.0.1', { timeoutMs: 3_000 });
  cluster.defer(() => client.close());
  return client;
}

describe('cluster redirects', () => {
  it('tells raw clients of both protocols where the active is, and both client classes follow', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];

    for (const standby of [b, c]) {
      const keyed = await raw(cluster, standby.ports.lock);
      expect(await keyed.next()).toBe(`M ${a.lockAddress}`);
      keyed.send('A redirect-raw 5 0');
      expect(await keyed.next()).toBe(`M ${a.lockAddress}`);
      keyed.send('R redirect-raw 1');
      expect(await keyed.next()).toBe(`M ${a.lockAddress}`);

      const session = await raw(cluster, standby.ports.session);
      session.send('ACQUIRE redirect-raw 5000');
      expect(await session.closedWith()).toEqual([`REDIRECT ${a.sessionAddress}`]);
    }
    // Nothing was granted by the standbys.
    expect(await holderOn(a, 'redirect-raw')).toBeNull();

    // Only standbys in the list: the client must follow M to the active.
    const viaStandby = cluster.keyedClient(['c']);
    const first = await viaStandby.acquire('redirect-keyed', { lease: 10_000, wait: 5_000 });
    expect((await holderOn(a, 'redirect-keyed'))?.token).toBe(first.token.toString());
    expect(await first.release()).toBe(true);

    // A standby first, then the active: the first connection follows M to the active.
    const keyedClient = cluster.keyedClient(['b', 'a']);
    const grants = await Promise.all([1, 2, 3, 4].map((i) => keyedClient.acquire(`redirect-keyed-${i}`, { lease: 10_000, wait: 5_000 })));
    for (const grant of grants) expect((await holderOn(a, grant.key))?.token).toBe(grant.token.toString());
    for (const grant of grants) expect(await grant.release()).toBe(true);

    const sessionClient = cluster.sessionClient(['b', 'a']);
    const lease = await sessionClient.open('redirect-session', { lease: 2_000, wait: 5_000 });
    cluster.defer(() => lease.close());
    expect(await holderOn(a, 'redirect-session')).toMatchObject({ protocol: 'session', token: lease.token.toString() });
    await lease.close();

    const onlyStandby = cluster.sessionClient(['c']);
    await onlyStandby.hold('redirect-session', { lease: 2_000, wait: 5_000 }, async ({ token }) => {
      expect((await holderOn(a, 'redirect-session'))?.token).toBe(token.toString());
    });
  });
});
