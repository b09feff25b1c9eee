// The cluster's roles as the fault injector sees them: which running node a role names now, and
// whether the cluster has settled (one active, every running node an in-sync standby of it).
import { activeOf, checkSettled, waitFor, type Cluster, type NodeProcess } from '../server/testing/cluster-harness.ts';
import type { NodePick } from './fault-schedule.ts';

const SETTLE_TIMEOUT_MS = 15_000;

/** The running node that `pick` names now. */
export async function resolveNode(cluster: Cluster, pick: NodePick): Promise<NodeProcess> {
  const running = cluster.nodes.filter((n) => n.running && !n.stopped);
  const actives = await activeOf(cluster).catch(() => [] as string[]);
  const active = running.find((n) => n.id === actives.sort()[0]) ?? running[0];
  if (active === undefined) throw new Error('no node is running');
  if (pick.role === 'active') return active;
  const standbys = running.filter((n) => n !== active);
  return standbys[pick.index % standbys.length] ?? active;
}

/**
 * Waits until one node is active and the rest are its in-sync standbys; returns its id, or an
 * error message. With `top` (the default) the active must also be the highest-priority running
 * node, so a node that came back has taken its place back (priority return) before the next fault.
 */
export async function settle(cluster: Cluster, top = true, timeoutMs = SETTLE_TIMEOUT_MS): Promise<{ active: string } | { error: string }> {
  try {
    const active = await waitFor(
      async () => {
        const actives = await activeOf(cluster);
        if (actives.length !== 1) throw new Error(`actives: ${JSON.stringify(actives)}`);
        const id = actives[0] as string;
        const first = cluster.nodes.find((n) => n.running)?.id;
        if (top && id !== first) throw new Error(`${id} is active, not ${first ?? 'none'} (the highest-priority running node)`);
        await checkSettled(cluster, id);
        return id;
      },
      { timeoutMs, intervalMs: 50, what: 'one active with in-sync standbys' },
    );
    return { active };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** The node active now (the first of the actives by id, as resolveNode picks), if any answers. */
export async function activeId(cluster: Cluster): Promise<string | undefined> {
  const actives = await activeOf(cluster).catch(() => [] as string[]);
  return actives.sort()[0];
}
