// Helpers for the etcd mode's real-process tests (server/cluster/cluster-etcd-*.test.ts): wait for
// an active with a given in-sync set, and open a raw keyed line to a node.
import { type Cluster, waitFor } from './cluster-harness.ts';
import { LineClient } from './line-client.ts';

/** Waits until `id` is active and its view's in-sync set is exactly `members` (in that order). */
export async function inSyncIs(cluster: Cluster, id: string, members: string[], timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      const view = await cluster.node(id).cluster();
      return view.phase === 'active' && JSON.stringify(view.coordination?.inSync) === JSON.stringify(members);
    },
    { timeoutMs, intervalMs: 50, what: `${id} active with in-sync ${JSON.stringify(members)}` },
  );
}

/** A raw keyed-protocol line client to `id`'s first lock address, closed at the cluster's teardown. */
export async function keyedLine(cluster: Cluster, id: string): Promise<LineClient> {
  const [host, port] = (cluster.lockAddresses(id)[0] as string).split(':');
  const client = await LineClient.open(Number(port), host, { timeoutMs: 10_000 });
  cluster.defer(() => client.close());
  return client;
}

/**
 * Waits until `id`'s view shows each of `standbys` alive and in sync (has had its whole snapshot).
 * The in-sync set holds one member by default, so a test that hands off to, or reads from, the
 * other standby waits for it here first: under load its join can end after the set was stored.
 */
export async function standbysSynced(cluster: Cluster, id: string, standbys: string[], timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      const nodes = (await cluster.node(id).cluster()).nodes;
      return standbys.every((s) => nodes.some((n) => n.id === s && n.alive && n.inSync));
    },
    { timeoutMs, intervalMs: 50, what: `${standbys.join(', ')} alive and in sync on ${id}` },
  );
}
