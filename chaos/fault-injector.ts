// Applies one scheduled fault to the running cluster or client pool and undoes it (restart,
// heal, SIGCONT, respawn), recording the window from the injection to the recovery. It then
// waits (bounded) for the cluster to settle: one active node, every running node an in-sync
// standby of it. A cluster that does not settle is reported, not hidden.
import { setTimeout as sleep } from 'node:timers/promises';
import { activeOf, checkSettled, waitFor, type Cluster, type NodeProcess } from '../server/testing/cluster-harness.ts';
import type { ClientPool } from './client-pool.ts';
import { type FaultWindow, now } from './history.ts';
import type { NodePick, ScheduledFault } from './fault-schedule.ts';

const SETTLE_TIMEOUT_MS = 15_000;

export interface Applied {
  windows: FaultWindow[];
  /** What happened, one line (printed by the runner). */
  description: string;
}

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
async function activeId(cluster: Cluster): Promise<string | undefined> {
  const actives = await activeOf(cluster).catch(() => [] as string[]);
  return actives.sort()[0];
}

export async function applyFault(fault: ScheduledFault, cluster: Cluster, pool: ClientPool): Promise<Applied> {
  switch (fault.kind) {
    case 'kill9':
    case 'sigterm': {
      const node = await resolveNode(cluster, fault.node);
      const hitActive = node.id === (await activeId(cluster));
      const start = now();
      if (fault.kind === 'kill9') await node.kill9();
      else await node.sigterm();
      await sleep(fault.downMs);
      await node.restart();
      return {
        windows: [{ kind: fault.kind, target: node.id, start, end: now(), hitActive }],
        description: `${fault.kind} ${node.id}${hitActive ? ' (active)' : ''}, restarted ${Math.round(now() - start)} ms later`,
      };
    }
    case 'api-handoff': {
      const from = await resolveNode(cluster, { role: 'active' });
      const to = fault.to === null ? undefined : (await resolveNode(cluster, { role: 'standby', index: fault.to })).id;
      const start = now();
      const reply = await from.post('/api/v1/cluster/handoff', to === undefined ? {} : { target: to }).catch((e: unknown) => ({ status: 0, body: String(e) }));
      const window: FaultWindow = { kind: 'api-handoff', target: `${from.id}->${to ?? 'any'}`, start, end: now(), hitActive: true };
      // The node that yielded takes its place back only once restored: do it when things settled.
      const settled = await settle(cluster, false);
      const restore = await from.post('/api/v1/cluster/restore', {}).catch((e: unknown) => ({ status: 0, body: String(e) }));
      const outcome = 'error' in settled ? `did not settle: ${settled.error}` : `${settled.active} active`;
      return {
        windows: [window],
        description: `API handoff ${from.id}->${to ?? 'any'}: ${reply.status} ${JSON.stringify(reply.body)}; ${outcome}; restore ${restore.status}`,
      };
    }
    case 'partition': {
      const proxies = fault.cut.map((id) => cluster.node(id).proxy);
      // Cutting a's and b's proxies cuts every link, the active's too.
      const active = await activeId(cluster);
      const hitActive = fault.cut.length > 1 || (active !== undefined && fault.cut.includes(active));
      const start = now();
      for (const proxy of proxies) proxy?.block();
      await sleep(fault.forMs);
      for (const proxy of proxies) proxy?.heal();
      return {
        windows: [{ kind: 'partition', target: fault.cut.join('+'), start, end: now(), hitActive }],
        description: `peer links of ${fault.cut.join('+')} cut for ${fault.forMs} ms`,
      };
    }
    case 'pause': {
      const node = await resolveNode(cluster, fault.node);
      const hitActive = node.id === (await activeId(cluster));
      const start = now();
      node.signal('SIGSTOP');
      await sleep(fault.forMs);
      node.signal('SIGCONT');
      return {
        windows: [{ kind: 'pause', target: node.id, start, end: now(), hitActive }],
        description: `SIGSTOP ${node.id}${hitActive ? ' (active)' : ''} for ${fault.forMs} ms`,
      };
    }
    case 'client-kill': {
      const holding = pool.holdingGroups();
      const index = holding.includes(fault.group) ? fault.group : (holding[0] ?? fault.group);
      const start = now();
      const killed = await pool.kill(index);
      await sleep(fault.downMs);
      await pool.respawn(index);
      const how = holding.includes(index) ? 'while holding' : 'holding nothing';
      return { windows: [{ kind: 'client-kill', target: killed, start, end: now() }], description: `kill -9 client worker ${killed} ${how}, respawned` };
    }
  }
}
