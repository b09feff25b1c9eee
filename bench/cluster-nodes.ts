// What the cluster benchmarks ask of a running test cluster (server/testing/cluster-harness.ts):
// a node's process id (its CPU time is read from /proc) and the one active node.
import { type Cluster, waitFor } from '../server/testing/cluster-harness.ts';

export function pidOf(cluster: Cluster, id: string): number {
  const pid = cluster.node(id).pid;
  if (pid === undefined) throw new Error(`node ${id} is not running`);
  return pid;
}

/** The id of the one node that says it is active (waits up to 30 s for exactly one). */
export async function theActive(cluster: Cluster): Promise<string> {
  return waitFor(
    async () => {
      const views = await Promise.all(cluster.nodes.filter((n) => n.running).map((n) => n.cluster().catch(() => null)));
      const actives = views.filter((v) => v?.phase === 'active');
      return actives.length === 1 ? (actives[0]?.self ?? null) : null;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: 'one active' },
  );
}
