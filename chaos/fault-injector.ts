// Applies one scheduled fault to the running cluster, its etcd (etcd mode) or the client pool and
// undoes it (restart, heal, SIGCONT, respawn), recording the window from the injection to the recovery. It then
// waits (bounded) for the cluster to settle: one active node, every running node an in-sync
// standby of it. A cluster that does not settle is reported, not hidden.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from '../server/testing/cluster-harness.ts';
import type { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import type { ClientPool } from './client-pool.ts';
import { activeId, resolveNode, settle } from './cluster-roles.ts';
import { type FaultWindow, now } from './history.ts';
import type { ScheduledFault } from './fault-schedule.ts';
import { applyEtcdFault } from './etcd-faults.ts';
import { applyPartition } from './partition-faults.ts';

export { resolveNode, settle } from './cluster-roles.ts';

export interface Applied {
  windows: FaultWindow[];
  /** What happened, one line (printed by the runner). */
  description: string;
}

/** `etcd`: the cluster's etcd in etcd mode (the etcd faults need it; the default mode has none). */
export async function applyFault(fault: ScheduledFault, cluster: Cluster, pool: ClientPool, etcd?: EtcdCluster): Promise<Applied> {
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
      const { window, description } = await applyPartition(fault, cluster);
      return { windows: [window], description };
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
    case 'etcd-cut':
    case 'etcd-member-kill':
    case 'etcd-quorum-loss': {
      if (etcd === undefined) throw new Error(`${fault.kind}: the cluster does not run in etcd mode`);
      const { window, description } = await applyEtcdFault(fault, cluster, etcd);
      return { windows: [window], description };
    }
  }
}
