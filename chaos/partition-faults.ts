// Partitions of a chaos run, made at the TCP fault proxies in front of the peer ports. Each peer
// link is dialled by the lower-priority node of the pair (server/cluster/peer-mesh.ts), so it
// runs through the higher-priority node's proxy, which tells the dialler by the PSK identity of
// its TLS ClientHello: one link of a node can be cut while its others flow, both ways or one way
// (the bytes of one direction held, as a link that drops packets one way and delivers their
// retransmissions once healed). Which links are cut is chosen by role (PartitionShape), resolved
// when the fault is applied; what the nodes made of it (the actives seen just before each heal)
// is recorded with the window.
import { setTimeout as sleep } from 'node:timers/promises';
import { activeOf, type Cluster, type NodeProcess } from '../server/testing/cluster-harness.ts';
import type { CutDirection } from '../server/testing/tcp-fault-proxy.ts';
import { resolveNode, settle } from './cluster-roles.ts';
import { describePartition, type ScheduledFault } from './fault-schedule.ts';
import { type FaultWindow, now } from './history.ts';

type PartitionFault = Extract<ScheduledFault, { kind: 'partition' }>;

/** Which way the link x-y is cut: both ways, or only the bytes x sends to y, or those y sends to x. */
export type Way = 'both' | 'x-to-y' | 'y-to-x';

/** Cuts the link x-y at the proxy it runs through: the higher-priority node's, which the other dials. */
export function cutLink(x: NodeProcess, y: NodeProcess, way: Way): void {
  const [dialed, dialer] = x.priority < y.priority ? [x, y] : [y, x];
  if (dialed.proxy === null) throw new Error(`node ${dialed.id} has no fault proxy (start the cluster with proxied: true)`);
  let direction: CutDirection = 'both';
  if (way !== 'both') {
    const sender = way === 'x-to-y' ? x : y;
    // to-target: what the dialler sends to the node behind the proxy.
    direction = sender === dialer ? 'to-target' : 'from-target';
  }
  dialed.proxy.cut({ direction, from: dialer.id });
}

export function healAll(cluster: Cluster): void {
  for (const n of cluster.nodes) n.proxy?.heal();
}

/** The links a shape cuts (every cut of a flap), with the active `x` and its standbys by priority. */
function cutShape(cluster: Cluster, f: PartitionFault, x: NodeProcess, standbys: NodeProcess[]): void {
  const pick = standbys[(f.standby ?? 0) % Math.max(1, standbys.length)];
  switch (f.shape) {
    case 'isolate':
    case 'handoff':
      for (const y of standbys) cutLink(x, y, 'both');
      return;
    case 'minority':
      if (pick !== undefined) cutLink(x, pick, 'both');
      return;
    case 'flap':
      for (const y of f.standby === null ? standbys : pick === undefined ? [] : [pick]) cutLink(x, y, 'both');
      return;
    case 'one-way-out':
      for (const y of standbys) cutLink(x, y, 'x-to-y');
      return;
    case 'one-way-in':
      for (const y of standbys) cutLink(x, y, 'y-to-x');
      return;
    case 'standby-link': {
      const [s0, s1] = standbys;
      if (s0 !== undefined && s1 !== undefined) cutLink(s0, s1, 'both');
      return;
    }
    case 'all':
      for (const y of cluster.nodes) for (const z of cluster.nodes) if (y.priority < z.priority) cutLink(y, z, 'both');
      return;
  }
}

async function activesNow(cluster: Cluster): Promise<string> {
  const actives = await activeOf(cluster).catch(() => [] as string[]);
  return actives.length === 0 ? 'no active' : `${actives.length === 1 ? 'active' : 'actives'} ${actives.sort().join('+')}`;
}

export interface AppliedPartition {
  window: FaultWindow;
  description: string;
}

export async function applyPartition(f: PartitionFault, cluster: Cluster): Promise<AppliedPartition> {
  const x = await resolveNode(cluster, { role: 'active' });
  const standbys = cluster.nodes.filter((n) => n !== x).sort((p, q) => p.priority - q.priority);
  const what = describePartition(f);
  const seen: string[] = [];
  let handoff = '';
  const start = now();
  if (f.shape === 'handoff') {
    const reply = x.post('/api/v1/cluster/handoff', {}).then(
      (r) => `${r.status} ${JSON.stringify(r.body).slice(0, 160)}`,
      (e: unknown) => `failed (${String(e)})`,
    );
    await sleep(f.cutAfterMs);
    cutShape(cluster, f, x, standbys);
    await sleep(f.forMs);
    seen.push(await activesNow(cluster));
    healAll(cluster);
    handoff = `; handoff answered ${await reply}`;
    // The node that yielded takes its place back only once restored: do it when things settled.
    await settle(cluster, false);
    const restore = await x.post('/api/v1/cluster/restore', {}).catch(() => ({ status: 0 }));
    handoff += `, restore ${restore.status}`;
  } else {
    const cycles = f.shape === 'flap' ? f.cycles : [{ cutMs: f.forMs, healMs: 0 }];
    for (const [i, c] of cycles.entries()) {
      cutShape(cluster, f, x, standbys);
      await sleep(c.cutMs);
      // Read before the heal: what the cut made (the read takes a few ms of the cut).
      seen.push(await activesNow(cluster));
      healAll(cluster);
      if (i < cycles.length - 1) await sleep(c.healMs);
    }
  }
  const end = now();
  const hitActive = f.shape !== 'standby-link';
  const observed = `${seen.join(', ')} before ${seen.length === 1 ? 'the heal' : 'each heal'}`;
  return {
    window: { kind: 'partition', target: `${x.id}: ${what}`, start, end, hitActive, observed },
    description: `partition (${x.id} active): ${what}, ${Math.round(end - start)} ms; ${observed}${handoff}`,
  };
}
