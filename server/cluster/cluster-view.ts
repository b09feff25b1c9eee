// The cluster as this node sees it, in the ops API's shape: every configured node in priority
// order with its role, liveness, lag and flags, what handoff and restore can do now, whom the
// active will hand the role back to by priority and why not yet, and the failover timeline
// (replicated from the active, so every node shows the same one).
import { formatAddress } from '../../lib/protocol/address-text.ts';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { ClusterView, CoordinationView, FailoverView, NodeView, ReplicationLag } from '../../lib/ops-api/api-types.ts';
import { isActivePhase } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { LoopDelayWatch } from './loop-delay.ts';
import type { NodeState } from './node-state.ts';
import type { MeshPeer } from './peer-mesh.ts';
import type { PeerWatch } from './peer-watch.ts';

/** What the view reads of the node (and changes nothing of). */
export interface ViewContext {
  readonly self: PeerConfig;
  readonly instanceId: string;
  /** Every configured node, in priority order. */
  readonly peers: readonly PeerConfig[];
  readonly state: Readonly<NodeState>;
  readonly watch: Pick<PeerWatch, 'isAlive' | 'activeId' | 'handoffTargets' | 'yieldedNodes'>;
  readonly mesh: { readonly peers: ReadonlyMap<string, MeshPeer> };
  /** The active's measure of its standbys' lag (ReplicationSource.lags). */
  readonly source: { lags(): Record<string, ReplicationLag> };
  readonly timeline: { entries(): readonly FailoverView[] };
  readonly engine: { readonly lockCount: number };
  readonly loopDelay: Pick<LoopDelayWatch, 'perSecondMaxMs' | 'perSecondGcMs' | 'perSecondBusyMs' | 'perSecondWorkMs'>;
  /** The etcd mode's coordination (its view fills `coordination`); null or absent in the peers mode. */
  readonly coordination?: { view(now: number): CoordinationView } | null;
}

/**
 * Alive as the page shows it: heard within the peer timeout (what the node's decisions go by)
 * and its link up. A peer killed with -9 closes its link at once; the decisions still wait out
 * the peer timeout before acting, but the view does not name it alive, or active, meanwhile.
 */
function seenAlive(node: ViewContext, id: string): boolean {
  return node.watch.isAlive(id) && (node.mesh.peers.get(id)?.link ?? null) !== null;
}

export function clusterView(node: ViewContext, now: number, wallNow: number): ClusterView {
  const st = node.state;
  const selfActive = st.role() === 'active';
  const followed = node.watch.activeId();
  // The active as this node knows it, unless its link is gone: then none is known (see seenAlive).
  const active = followed === null || followed === node.self.id || seenAlive(node, followed) ? followed : null;
  const activeStatus = active === null || active === node.self.id ? undefined : st.statuses.get(active);
  const activeInstance = selfActive ? st.syncedWith : (activeStatus?.instance ?? null);
  const lags: Record<string, ReplicationLag> = selfActive ? node.source.lags() : (activeStatus?.lags ?? {});
  const nodes: NodeView[] = [];
  node.peers.forEach((p, priority) => {
    const addresses = {
      lockAddress: formatAddress({ host: p.host, port: p.lockPort }),
      sessionAddress: formatAddress({ host: p.host, port: p.sessionPort }),
      httpAddress: formatAddress({ host: p.host, port: p.httpPort }),
    };
    if (p.id === node.self.id) {
      nodes.push({
        id: p.id,
        role: st.role(),
        priority,
        self: true,
        alive: true,
        lastSeen: wallNow,
        replicationLag: selfActive ? null : (lags[p.id] ?? null),
        inSync: selfActive || (st.phase === 'standby' && st.syncedWith !== null && st.syncedWith === activeInstance),
        yielded: st.yielded,
        lastRole: st.role(),
        ...addresses,
      });
      return;
    }
    const s = st.statuses.get(p.id);
    const mesh = node.mesh.peers.get(p.id);
    const alive = seenAlive(node, p.id);
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
      lastRole: s === undefined ? null : isActivePhase(s.phase) ? 'active' : 'standby',
      ...addresses,
    });
  });
  const targets = selfActive ? node.watch.handoffTargets() : nodes.filter((n) => n.inSync && n.role === 'standby').map((n) => n.id);
  let reason: string | null = null;
  if (active === null) reason = 'no active node is known right now';
  else if (st.phase === 'handing-off') reason = 'a handoff is under way';
  else if (targets.length === 0) reason = 'no standby is alive and in sync to hand off to';
  const yielded = node.watch.yieldedNodes();
  const wait = selfActive ? st.returnWait : null;
  const priorityReturn =
    wait === null ? null : { node: wait.verdict.node, inMs: Math.max(0, Math.ceil(wait.verdict.inMs - (now - wait.at))), reason: wait.verdict.reason };
  return {
    self: node.self.id,
    instanceId: node.instanceId,
    clustered: true,
    phase: st.phase,
    active,
    nodes,
    handoff: { available: reason === null, reason, targets: reason === null ? targets : [] },
    restore: { available: yielded.length > 0, yielded },
    priorityReturn,
    partialTable: partialTable(node),
    ...(node.coordination === null || node.coordination === undefined ? {} : { coordination: node.coordination.view(now) }),
    failovers: [...node.timeline.entries()],
    loopDelayMs: node.loopDelay.perSecondMaxMs(),
    gcPauseMs: node.loopDelay.perSecondGcMs(),
    loopBusyMs: node.loopDelay.perSecondBusyMs(),
    loopWorkMs: node.loopDelay.perSecondWorkMs(),
  };
}

/** Why this node does not take the active role with the part of a table it holds (role-decider.ts holdsPartialTable); null when it does not hold one. */
function partialTable(node: ViewContext): ClusterView['partialTable'] {
  const hold = node.state.partialHold;
  if (hold === null) return null;
  const from = hold.from ?? 'the active node it followed';
  const locks = node.engine.lockCount;
  return {
    from: hold.from,
    locks,
    reason: `this node never finished syncing from ${from}, which is not heard: it holds ${locks} locks, only part of that table, and will not serve them; it syncs from the next active node it hears (restart it to start over with an empty table)`,
  };
}
