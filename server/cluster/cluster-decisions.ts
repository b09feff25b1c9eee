// The node's periodic decision (every 25 ms, and the start of everything a node does on its
// own): notice a freeze, re-ask for a snapshot that did not come, point clients at the right
// place, then ask the role decider (lib/cluster/role-decider.ts) and carry out its answer.
import { type ReconfirmPeer, reconfirmVerdict } from '../../lib/cluster/grant-reconfirm.ts';
import { isActivePhase } from '../../lib/cluster/cluster-vocabulary.ts';
import { decideRole, type PeerState } from '../../lib/cluster/role-decider.ts';
import { HOLD, type Route } from '../lines/routing.ts';

const MISCONFIGURED_HOLD: Route = { kind: 'hold', maxMs: 0 };
// Types only: cluster-node.ts imports this file, so a value import back would be a cycle.
import type { ClusterNode, ClusterNodeDeps } from './cluster-node.ts';
import { redirectRoute } from './redirect-route.ts';

const SYNC_RETRY_MS = 500;

function alivePeers(node: ClusterNode): PeerState[] {
  const out: PeerState[] = [];
  const lags = node.phase === 'active' ? node.source.lags() : {};
  for (const peer of node.mesh.peers.values()) {
    const s = node.statuses.get(peer.config.id);
    if (s === undefined || !node.isAlive(peer.config.id)) continue;
    out.push({
      id: s.id,
      priority: peer.priority,
      instance: s.instance,
      phase: s.phase,
      syncedWith: s.syncedWith,
      yielded: s.yielded,
      leaving: s.leaving === true,
      fresh: s.fresh === true,
      following: isActivePhase(s.phase) ? null : s.active,
      lagEvents: lags[s.id]?.events ?? null,
    });
  }
  return out;
}

/**
 * Whether this process was frozen since the last decision, handled at once if so. Run first by
 * the decision and by whatever may run before it when the process wakes up (a heartbeat, a link
 * coming up, a peer's message): a woken active must not tell its peers it is active before it has
 * stepped out (a stale "active" made the standby that had taken over step down to it while it
 * followed that standby: each waited for the other, and nobody served).
 */
export function noticeFreeze(node: ClusterNode, d: ClusterNodeDeps): void {
  const now = d.clock.now();
  const frozenMs = now - node.lastDecideAt;
  // An active whose grant window has passed is treated as frozen even when the gap is shorter
  // than the peer timeout: its heartbeats were too far apart for it to know that no peer has
  // promoted (see role-lease.ts). The engine has refused grants since the window passed.
  const lapsed = node.phase === 'active' && node.lease.lapsed(now);
  if (frozenMs <= d.cluster.peerTimeoutMs && !lapsed) return;
  if (frozenMs <= d.cluster.peerTimeoutMs) {
    // Heartbeats too far apart, but the loop did run within the peer timeout (a long GC, a
    // loaded host): a peer may have promoted only if it stopped hearing us, and it would say so.
    // Grants stay shut (the window is not moved) until every live peer has told us, after a
    // heartbeat sent since then, that it still follows this node (reconfirmGrants); one that
    // says otherwise, or no answer within a peer timeout, steps out as after a freeze.
    if (node.reconfirmSince === null) {
      node.reconfirmSince = now;
      d.logger.warn(
        { gapMs: Math.round(frozenMs), grantWindowEndedMsAgo: Math.round(now - node.lease.until) },
        'heartbeats too far apart to be sure no peer has promoted (grant window passed): grants held until the peers confirm this node',
      );
    }
    return;
  }
  node.lastDecideAt = now;
  node.resumedAt = now;
  node.reconfirmSince = null;
  afterFreeze(node, d, frozenMs, false);
}

/**
 * An active whose grant window passed without a freeze (noticeFreeze) opens it again once
 * every live peer's status, received at least one heartbeat after the lapse (so the peer had
 * read a heartbeat sent after it), says it follows this node; it steps out when a peer is
 * active or promoting, or when the confirmation takes longer than a peer timeout.
 */
function reconfirmGrants(node: ClusterNode, d: ClusterNodeDeps, now: number): void {
  const since = node.reconfirmSince;
  if (since === null) return;
  if (node.phase !== 'active') {
    node.reconfirmSince = null;
    return;
  }
  const peers: ReconfirmPeer[] = [];
  for (const peer of node.mesh.peers.values()) {
    const id = peer.config.id;
    const s = node.statuses.get(id);
    peers.push({ alive: peer.link !== null && node.isAlive(id), status: s === undefined ? null : s, statusAt: node.statusAt.get(id) ?? null });
  }
  const verdict = reconfirmVerdict({ selfId: node.self.id, since, now, heartbeatMs: node.heartbeatMs, peerTimeoutMs: d.cluster.peerTimeoutMs, peers });
  if (verdict.kind === 'wait') return;
  node.reconfirmSince = null;
  if (verdict.kind === 'step-out') {
    afterFreeze(node, d, now - since, true);
    return;
  }
  d.engine.setGrantWindow(node.lease.until);
  // Locks that came free while the gate was shut go to the head of their queue now, not at
  // the daemon's next once-a-second retry.
  d.engine.retryHeldGrants();
  // The driver already runs on an active: resume() only re-arms its timer for the leases just granted.
  d.driver.resume();
  d.logger.info({ afterMs: Math.round(now - since) }, 'grant window open again: every live peer follows this node');
}

export function decide(node: ClusterNode, d: ClusterNodeDeps): void {
  const now = d.clock.now();
  noticeFreeze(node, d);
  reconfirmGrants(node, d, now);
  node.lastDecideAt = now;
  node.mesh.closeSilent(d.cluster.peerTimeoutMs, node.resumedAt);
  const alive = alivePeers(node);
  // The active this node follows went silent: say so at once (its status says whom it hears),
  // so the other standbys, who wait while a peer still follows a live active, need not wait a heartbeat.
  if (node.following !== null && !node.isAlive(node.following) && node.lossAnnouncedFor !== node.following) {
    node.lossAnnouncedFor = node.following;
    node.sendStatus();
  }
  // A sync request can go unanswered (sent while that node was still promoting): ask again. And
  // an active that no longer streams to this standby (it stepped out after a freeze and took the
  // role back, or cut this standby off) says so by leaving it out of its lags: re-sync.
  if (node.following !== null && (node.phase === 'syncing' || node.phase === 'standby')) {
    const f = node.mesh.peers.get(node.following);
    const s = node.statuses.get(node.following);
    const dropped = node.phase === 'standby' && s?.phase === 'active' && s.lags !== undefined && !(node.self.id in s.lags);
    const wait = node.phase === 'syncing' ? SYNC_RETRY_MS : 2 * SYNC_RETRY_MS;
    // Not while a snapshot is still arriving: a large one can take longer than the retry.
    if (f !== undefined && f.link !== null && !f.link.receiving && (node.phase === 'syncing' || dropped) && now - node.syncRequestedAt > wait)
      node.requestSync(f);
  }
  // Clients go to the active we follow while we are in touch with it; when its link is down
  // or it went silent, they are held here until the cluster settles (not sent to a dead node).
  if (node.phase === 'syncing' || node.phase === 'standby') {
    const f = node.following === null ? undefined : node.mesh.peers.get(node.following);
    node.setRoute(f !== undefined && f.link !== null && node.isAlive(f.config.id) ? redirectRoute(f.config) : HOLD);
  }
  const decision = decideRole(
    {
      id: node.self.id,
      priority: node.priority,
      instance: d.instanceId,
      phase: node.phase,
      syncedWith: node.syncedWith,
      yielded: node.yielded,
      following: node.followingAlive(),
      lastActiveInstance: node.lastActiveInstance,
      discovering: now < node.discoverUntil,
      leaving: node.leaving,
      fresh: node.fresh,
    },
    alive,
  );
  // Refused by a peer (or refusing one), hearing nobody, and never part of the running cluster in
  // this run: this node or its peers are misconfigured (admin token, a --node given twice), and
  // serving alone would split the cluster. A standby that followed an active goes on as usual
  // (it may be refusing a misconfigured newcomer while the real active died).
  const refusal = node.mesh.recentRefusal(2 * d.cluster.peerTimeoutMs);
  if (decision.kind === 'promote' && alive.length === 0 && refusal !== null && node.lastActiveInstance === null) {
    // It will not serve until the configuration is fixed: send clients on at once (their next
    // address) rather than hold them for seconds.
    node.setRoute(MISCONFIGURED_HOLD);
    if (now - node.refusalNotedAt > 10_000) {
      node.refusalNotedAt = now;
      d.logger.error(
        { peer: refusal.peer, reason: refusal.reason },
        'not taking the active role: a peer of this cluster is running but refuses this node, or this node refuses it; fix the configuration',
      );
    }
    return;
  }
  switch (decision.kind) {
    case 'stay':
      return;
    case 'follow':
      node.follow(decision.id);
      return;
    case 'promote':
      void node.promoteAfterLoss();
      return;
    case 'step-down':
      d.logger.warn({ to: decision.to }, 'split brain: a higher-priority active node is back; stepping down');
      node.follow(decision.to);
      return;
    case 'handoff':
      void node.handoff(decision.to, 'priority-return');
      return;
  }
}

/**
 * This process did not run for longer than the peer timeout (SIGSTOP, a VM pause, a swap
 * storm): the peers have taken it for dead and may have promoted another node, and what it
 * last heard of them is stale. It listens again for a peer timeout before deciding anything;
 * an active node stops serving meanwhile, so that a stale active never overrides the one
 * that took over while it was away.
 */
function afterFreeze(node: ClusterNode, d: ClusterNodeDeps, frozenMs: number, lapsedOnly: boolean): void {
  const now = d.clock.now();
  node.discoverUntil = now + d.cluster.peerTimeoutMs;
  if (node.role() !== 'active') {
    d.logger.warn({ frozenMs: Math.round(frozenMs) }, 'this process was frozen longer than the peer timeout: listening to the peers again');
    return;
  }
  if (lapsedOnly) {
    d.logger.warn(
      { frozenMs: Math.round(frozenMs), grantWindowEndedMsAgo: Math.round(now - node.lease.until) },
      'heartbeats too far apart to be sure no peer has promoted (grant window passed): stepping out of the active role until the peers are heard',
    );
  } else {
    d.logger.warn(
      { frozenMs: Math.round(frozenMs) },
      'this process was frozen longer than the peer timeout: stepping out of the active role until the peers are heard',
    );
  }
  node.source.stop();
  d.driver.pause();
  // No grant either until it knows whether it keeps this state: another node may have taken over.
  d.engine.holdHandovers();
  node.setRoute(HOLD);
  node.phase = 'discovering';
  node.lastActiveInstance = d.instanceId;
  node.sendStatus();
}
