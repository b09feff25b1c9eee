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
