// The faults of etcd mode, applied to the running cluster and its etcd and undone: one Baton
// node cut from etcd at its own fault proxies (refused, or black-holed: only timeouts tell), an
// etcd member killed (etcd's leader or a follower) and restarted on its data, and quorum lost (two
// members killed) and back. Each records its window, and what the Baton nodes made of it (the
// actives seen just before the undo), as the partitions do.
import { setTimeout as sleep } from 'node:timers/promises';
import { activeOf, type Cluster } from '../server/testing/cluster-harness.ts';
import type { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { activeId, resolveNode } from './cluster-roles.ts';
import type { ScheduledFault } from './fault-schedule.ts';
import { type FaultWindow, now } from './history.ts';

type EtcdFault = Extract<ScheduledFault, { kind: 'etcd-cut' | 'etcd-member-kill' | 'etcd-quorum-loss' }>;

export interface AppliedEtcdFault {
  window: FaultWindow;
  description: string;
}

/** How long a restarted etcd gets to take writes again before the runner goes on (and says so). */
const ETCD_BACK_TIMEOUT_MS = 20_000;

async function activesNow(cluster: Cluster): Promise<string> {
  const actives = await activeOf(cluster).catch(() => [] as string[]);
  return actives.length === 0 ? 'no active' : `${actives.length === 1 ? 'active' : 'actives'} ${actives.sort().join('+')}`;
}

/** The index of etcd's leader (or of a running follower), or of any running member if none says it leads. */
async function pickMember(etcd: EtcdCluster, leader: boolean, not: number[] = []): Promise<number> {
  const running = etcd.members.map((_, i) => i).filter((i) => etcd.isRunning(i) && !not.includes(i));
  const lead = await etcd.leaderIndex().catch(() => -1);
  const pick = leader ? running.find((i) => i === lead) : running.find((i) => i !== lead);
  const first = running[0];
  if (first === undefined) throw new Error('no etcd member is running');
  return pick ?? first;
}

async function etcdBack(etcd: EtcdCluster): Promise<string> {
  try {
    await etcd.waitWritable(ETCD_BACK_TIMEOUT_MS);
    return 'etcd writable again';
  } catch (error) {
    return `etcd NOT writable within ${ETCD_BACK_TIMEOUT_MS} ms: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
}

export async function applyEtcdFault(f: EtcdFault, cluster: Cluster, etcd: EtcdCluster): Promise<AppliedEtcdFault> {
  const activeBefore = await activeId(cluster);
  switch (f.kind) {
    case 'etcd-cut': {
      const node = await resolveNode(cluster, f.node);
      if (node.etcd === null) throw new Error(`node ${node.id} has no etcd proxies (start the cluster with etcd)`);
      const hitActive = node.id === activeBefore;
      const start = now();
      if (f.silent) node.etcd.blackhole();
      else node.etcd.cut();
      await sleep(f.forMs);
      const observed = `${await activesNow(cluster)} before the heal`;
      node.etcd.heal();
      const end = now();
      const how = f.silent ? 'black-holed' : 'refused';
      return {
        window: { kind: 'etcd-cut', target: `${node.id}${hitActive ? ' (active)' : ''} cut from etcd, ${how}`, start, end, hitActive, observed },
        description: `${node.id}${hitActive ? ' (active)' : ''} cut from etcd (${how}) ${Math.round(end - start)} ms; ${observed}`,
      };
    }
    case 'etcd-member-kill': {
      const member = await pickMember(etcd, f.leader);
      const start = now();
      await etcd.kill9(member);
      await sleep(f.downMs);
      const observed = `${await activesNow(cluster)} before the restart`;
      etcd.restart(member);
      const back = await etcdBack(etcd);
      const end = now();
      const name = etcd.member(member).name;
      return {
        window: { kind: 'etcd-member-kill', target: `etcd ${name}`, start, end, hitActive: false, observed },
        description: `kill -9 etcd ${name} (${f.leader ? 'leader' : 'follower'}), restarted after ${f.downMs} ms; ${observed}; ${back}`,
      };
    }
    case 'etcd-quorum-loss': {
      const first = await pickMember(etcd, f.leader);
      const second = await pickMember(etcd, false, [first]);
      const start = now();
      await Promise.all([etcd.kill9(first), etcd.kill9(second)]);
      await sleep(f.forMs);
      const observed = `${await activesNow(cluster)} before quorum returned`;
      etcd.restart(first);
      etcd.restart(second);
      const back = await etcdBack(etcd);
      const end = now();
      const names = `${etcd.member(first).name}+${etcd.member(second).name}`;
      return {
        window: { kind: 'etcd-quorum-loss', target: `etcd ${names}`, start, end, hitActive: true, observed },
        description: `etcd quorum lost: kill -9 ${names} for ${f.forMs} ms; ${observed}; ${back}`,
      };
    }
  }
}
