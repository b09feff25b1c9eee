// The cluster as this node sees it, in the ops API's shape: every configured node in priority
// order with its role, liveness, lag and flags, what handoff and restore can do now, and the
// failover timeline (replicated from the active, so every node shows the same one).
import { formatAddress } from '../../lib/client/address.ts';
import type { ClusterView, NodeView, ReplicationLag } from '../../lib/ops-api/api-types.ts';
import { isActivePhase } from '../../lib/cluster/cluster-vocabulary.ts';
import type { ClusterNode } from './cluster-node.ts';

export function clusterView(node: ClusterNode, now: number, wallNow: number): ClusterView {
  const selfActive = node.role() === 'active';
  const active = node.activeId();
  const activeStatus = active === null || active === node.self.id ? undefined : node.statuses.get(active);
  const activeInstance = selfActive ? node.syncedWith : (activeStatus?.instance ?? null);
  const lags: Record<string, ReplicationLag> = selfActive ? node.source.lags() : (activeStatus?.lags ?? {});
  const nodes: NodeView[] = [];
  node.peersInOrder().forEach((p, priority) => {
    const addresses = {
      lockAddress: formatAddress({ host: p.host, port: p.lockPort }),
      sessionAddress: formatAddress({ host: p.host, port: p.sessionPort }),
      httpAddress: formatAddress({ host: p.host, port: p.httpPort }),
    };
    if (p.id === node.self.id) {
      nodes.push({
        id: p.id,
        role: node.role(),
        priority,
        self: true,
        alive: true,
        lastSeen: wallNow,
        replicationLag: selfActive ? null : (lags[p.id] ?? null),
        inSync: selfActive || (node.phase === 'standby' && node.syncedWith !== null && node.syncedWith === activeInstance),
        yielded: node.yielded,
        ...addresses,
      });
      return;
    }
    const s = node.statuses.get(p.id);
    const mesh = node.mesh.peers.get(p.id);
    const alive = node.isAlive(p.id);
    const isActive = alive && s !== undefined && isActivePhase(s.phase);
    const seen = mesh === undefined || mesh.lastSeen === Number.NEGATIVE_INFINITY ? null : Math.round(wallNow - (now - mesh.lastSeen));
    nodes.push({
      id: p.id,
      role: isActive ? 'active' : 'standby',
      priority,
      self: false,
      alive,
      lastSeen: seen,
      replicationLag: isActive ? null : (lags[p.id] ?? null),
      inSync: alive && s !== undefined && (isActive || (s.phase === 'standby' && s.syncedWith !== null && s.syncedWith === activeInstance)),
      yielded: alive && s?.yielded === true,
      ...addresses,
    });
  });
  const targets = selfActive ? node.handoffTargets() : nodes.filter((n) => n.inSync && n.role === 'standby').map((n) => n.id);
  let reason: string | null = null;
  if (active === null) reason = 'no active node is known right now';
  else if (node.phase === 'handing-off') reason = 'a handoff is under way';
  else if (targets.length === 0) reason = 'no standby is alive and in sync to hand off to';
  const yielded = node.yieldedNodes();
  return {
    self: node.self.id,
    instanceId: node.instanceId,
    clustered: true,
    phase: node.phase,
    active,
    nodes,
    handoff: { available: reason === null, reason, targets: reason === null ? targets : [] },
    restore: { available: yielded.length > 0, yielded },
    failovers: [...node.failovers],
    loopDelayMs: node.loopDelay.perSecondMaxMs(),
    gcPauseMs: node.loopDelay.perSecondGcMs(),
  };
}
