// The node's periodic decision (every 25 ms, and the start of everything a node does on its
// own): the runner of the failover rules. It notices a freeze (lib/cluster/freeze-rule.ts),
// announces a silent active (loss-announce-rule.ts), re-asks for a snapshot that did not come
// (resync-rule.ts), points clients at the right place (client-route-rule.ts), then asks the
// role decider (lib/cluster/role-decider.ts) and the misconfiguration rule
// (lib/cluster/misconfig-rule.ts) and carries out their answer with the transitions
// (cluster-transitions.ts). The rules are pure; the carrying out is here.
import { clientRoute } from '../../lib/cluster/client-route-rule.ts';
import { isActivePhase } from '../../lib/ops-api/cluster-vocabulary.ts';
import { freezeRule } from '../../lib/cluster/freeze-rule.ts';
import { lossToAnnounce } from '../../lib/cluster/loss-announce-rule.ts';
import { type ReconfirmPeer, reconfirmVerdict } from '../../lib/cluster/grant-reconfirm.ts';
import { misconfigRule } from '../../lib/cluster/misconfig-rule.ts';
import { resyncRule } from '../../lib/cluster/resync-rule.ts';
import { trackSteady } from '../../lib/cluster/priority-return.ts';
import { decideRole, holdsPartialTable, type PeerState, returnVerdict } from '../../lib/cluster/role-decider.ts';
import type { ReplicationLag } from '../../lib/ops-api/api-types.ts';
import { HOLD, type Route } from '../lines/routing.ts';
import { follow, handoff, promoteAfterLoss, requestSync, type TransitionContext } from './cluster-transitions.ts';
import type { PeerMesh } from './peer-mesh.ts';
import type { PeerWatch } from './peer-watch.ts';
import { redirectRoute } from './redirect-route.ts';
import type { RoleLease } from './role-lease.ts';
import { decideByEtcd, type EtcdRoleContext } from './cluster-etcd-role.ts';

const MISCONFIGURED_HOLD: Route = { kind: 'hold', maxMs: 0 };

/** What the decisions read and drive: the transitions' context, and what the rules read besides. */
export interface DecisionContext extends TransitionContext {
  /** This node's priority (0 = highest). */
  readonly priority: number;
  readonly heartbeatMs: number;
  /** How long a higher-priority standby must be steady before this node, active, hands the role back to it. */
  readonly returnHoldDownMs: number;
  readonly lease: Pick<RoleLease, 'lapsed' | 'until'>;
  readonly watch: Pick<PeerWatch, 'isAlive' | 'followingAlive'>;
  readonly mesh: Pick<PeerMesh, 'peers' | 'send' | 'closeSilent' | 'recentRefusal'>;
  readonly source: TransitionContext['source'] & { lags(): Record<string, ReplicationLag> };
}

/**
 * The peers heard within the peer timeout. On an active, it also keeps, for each, since when it
 * has been a synced standby without a break (the priority return's hold-down): every decision
 * looks, so a break is seen within 25 ms.
 */
function alivePeers(node: DecisionContext, now: number): PeerState[] {
  const out: PeerState[] = [];
  const st = node.state;
  const active = st.phase === 'active';
  const lags = active ? node.source.lags() : {};
  if (!active) st.steady.clear();
  for (const peer of node.mesh.peers.values()) {
    const id = peer.config.id;
    const s = st.statuses.get(id);
    const alive = s !== undefined && node.watch.isAlive(id);
    let steadyMs: number | null = null;
    if (active) {
      const sample = s === undefined ? null : { instance: s.instance, phase: s.phase, syncedWith: s.syncedWith, alive, statusAt: st.statusAt.get(id) ?? 0 };
      const record = sample === null ? null : trackSteady(st.steady.get(id) ?? null, sample, node.instanceId, now, node.peerTimeoutMs);
      if (record === null) st.steady.delete(id);
      else st.steady.set(id, record);
      steadyMs = record === null ? null : now - record.since;
    }
    if (s === undefined || !alive) continue;
    out.push({
      id: s.id,
      priority: peer.priority,
      instance: s.instance,
      phase: s.phase,
      syncedWith: s.syncedWith,
      yielded: s.yielded,
      leaving: s.leaving === true,
      fresh: s.fresh === true,
      partial: s.partial === true,
      following: isActivePhase(s.phase) ? null : s.active,
      lagEvents: lags[s.id]?.events ?? null,
      steadyMs,
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
export function noticeFreeze(node: DecisionContext): void {
  const st = node.state;
  const now = node.clock.now();
  if (node.coordination !== null) {
    // The etcd mode: the holder's permission lapses by itself over a freeze, and the role is the
    // holder's to keep or lose (cluster-etcd-role.ts); silences count from the wake-up only.
    if (now - st.lastDecideAt > node.peerTimeoutMs) st.resumedAt = now;
    return;
  }
  // An active whose grant window has passed is treated as frozen even when the gap is shorter
  // than the peer timeout: its heartbeats were too far apart for it to know that no peer has
  // promoted (see role-lease.ts). The engine has refused grants since the window passed.
  const verdict = freezeRule({
    now,
    lastDecideAt: st.lastDecideAt,
    peerTimeoutMs: node.peerTimeoutMs,
    phase: st.phase,
    leaseLapsed: node.lease.lapsed(now),
    reconfirmSince: st.reconfirmSince,
  });
  switch (verdict.kind) {
    case 'none':
    case 'holding':
      return;
    case 'hold-grants':
      // Heartbeats too far apart, but the loop did run within the peer timeout (a long GC, a
      // loaded host): a peer may have promoted only if it stopped hearing us, and it would say so.
      // Grants stay shut (the window is not moved) until every live peer has told us, after a
      // heartbeat sent since then, that it still follows this node (reconfirmGrants); one that
      // says otherwise, or no answer within a peer timeout, steps out as after a freeze.
      st.reconfirmSince = verdict.since;
      node.logger.warn(
        { gapMs: Math.round(verdict.gapMs), grantWindowEndedMsAgo: Math.round(now - node.lease.until) },
        'heartbeats too far apart to be sure no peer has promoted (grant window passed): grants held until the peers confirm this node',
      );
      return;
    case 'frozen':
      st.lastDecideAt = now;
      st.resumedAt = now;
      st.reconfirmSince = null;
      afterFreeze(node, verdict.frozenMs, verdict.stepOut, false);
      return;
  }
}

/**
 * An active whose grant window passed without a freeze (noticeFreeze) opens it again once
 * every live peer's status, received at least one heartbeat after the lapse (so the peer had
 * read a heartbeat sent after it), says it follows this node; it steps out when a peer is
 * active or promoting, or when the confirmation takes longer than a peer timeout.
 */
function reconfirmGrants(node: DecisionContext, now: number): void {
  const st = node.state;
  const since = st.reconfirmSince;
  if (since === null) return;
  if (st.phase !== 'active') {
    st.reconfirmSince = null;
    return;
  }
  const peers: ReconfirmPeer[] = [];
  for (const peer of node.mesh.peers.values()) {
    const id = peer.config.id;
    const s = st.statuses.get(id);
    peers.push({ alive: peer.link !== null && node.watch.isAlive(id), status: s === undefined ? null : s, statusAt: st.statusAt.get(id) ?? null });
  }
  const verdict = reconfirmVerdict({ selfId: node.self.id, since, now, heartbeatMs: node.heartbeatMs, peerTimeoutMs: node.peerTimeoutMs, peers });
  if (verdict.kind === 'wait') return;
  st.reconfirmSince = null;
  if (verdict.kind === 'step-out') {
    // Only an active waits for confirmation (checked above): it steps out.
    afterFreeze(node, now - since, true, true);
    return;
  }
  node.engine.setGrantWindow(node.lease.until);
  // Locks that came free while the gate was shut go to the head of their queue now, not at
  // the daemon's next once-a-second retry.
  node.engine.retryHeldGrants();
  // The driver already runs on an active: resume() only re-arms its timer for the leases just granted.
  node.driver.resume();
  node.logger.info({ afterMs: Math.round(now - since) }, 'grant window open again: every live peer follows this node');
}

export function decide(node: DecisionContext): void {
  const st = node.state;
  const now = node.clock.now();
  noticeFreeze(node);
  reconfirmGrants(node, now);
  st.lastDecideAt = now;
  node.mesh.closeSilent(node.peerTimeoutMs, st.resumedAt);
  const alive = alivePeers(node, now);
  noteReturnWait(node, alive, now);
  notePartialHold(node, alive, now);
  // The active this node follows went silent: say so at once (loss-announce-rule.ts).
  const silent = lossToAnnounce({
    following: st.following,
    followingAlive: st.following !== null && node.watch.isAlive(st.following),
    announcedFor: st.lossAnnouncedFor,
  });
  if (silent !== null) {
    st.lossAnnouncedFor = silent;
    node.sendStatus();
  }
  // Ask the followed active for a snapshot again (resync-rule.ts), and point clients at it or
  // hold them (client-route-rule.ts).
  const followed = st.following === null ? undefined : node.mesh.peers.get(st.following);
  const link = followed?.link ?? null;
  const resync = resyncRule({
    selfId: node.self.id,
    phase: st.phase,
    link: link === null ? null : { receiving: link.receiving },
    followedStatus: st.following === null ? null : (st.statuses.get(st.following) ?? null),
    now,
    syncRequestedAt: st.syncRequestedAt,
  });
  if (resync.kind === 'request' && followed !== undefined) requestSync(node, followed);
  const route = clientRoute({
    phase: st.phase,
    followed: followed === undefined ? null : { peer: followed.config, linkUp: followed.link !== null, alive: node.watch.isAlive(followed.config.id) },
  });
  if (route.kind !== 'keep') node.setRoute(route.kind === 'redirect' ? redirectRoute(route.to) : HOLD);
  // The etcd mode: the role comes from etcd, not from the peers' decider (cluster-etcd-role.ts).
  if (node.coordination !== null) {
    decideByEtcd(node as EtcdRoleContext, alive, now);
    return;
  }
  const decision = decideRole(
    {
      id: node.self.id,
      priority: node.priority,
      instance: node.instanceId,
      phase: st.phase,
      syncedWith: st.syncedWith,
      yielded: st.yielded,
      following: node.watch.followingAlive(),
      lastActiveInstance: st.lastActiveInstance,
      discovering: now < st.discoverUntil,
      leaving: st.leaving,
      fresh: st.fresh,
      returnHoldDownMs: node.returnHoldDownMs,
    },
    alive,
  );
  // A promotion is held back when this node or its peers are misconfigured (misconfig-rule.ts says why).
  const refusal = node.mesh.recentRefusal(2 * node.peerTimeoutMs);
  const misconfig = misconfigRule({
    decision,
    alivePeers: alive.length,
    refusal,
    lastActiveInstance: st.lastActiveInstance,
    now,
    refusalNotedAt: st.refusalNotedAt,
  });
  if (misconfig.kind === 'refuse') {
    // It will not serve until the configuration is fixed: send clients on at once (their next
    // address) rather than hold them for seconds.
    node.setRoute(MISCONFIGURED_HOLD);
    if (misconfig.log) {
      st.refusalNotedAt = now;
      node.logger.error(
        { peer: misconfig.peer, reason: misconfig.reason },
        'not taking the active role: a peer of this cluster is running but refuses this node, or this node refuses it; fix the configuration',
      );
    }
    return;
  }
  switch (decision.kind) {
    case 'stay':
      return;
    case 'follow':
      follow(node, decision.id);
      return;
    case 'promote':
      void promoteAfterLoss(node);
      return;
    case 'step-down':
      node.logger.warn({ to: decision.to }, 'split brain: a higher-priority active node is back; stepping down');
      follow(node, decision.to);
      return;
    case 'handoff':
      void handoff(node, decision.to, 'priority-return');
      return;
  }
}

/**
 * Whether this node holds only part of the table of the active it followed, which is not heard
 * (role-decider.ts holdsPartialTable: the decider then never picks it). Said once when it starts
 * and when it ends, in the log and in the status (peers pass it over); the view and /readyz say why.
 */
function notePartialHold(node: DecisionContext, alive: readonly PeerState[], now: number): void {
  const st = node.state;
  const held = holdsPartialTable({ instance: node.instanceId, syncedWith: st.syncedWith, lastActiveInstance: st.lastActiveInstance }, alive);
  if (held === (st.partialHold !== null)) return;
  if (held) {
    st.partialHold = { from: st.following, since: now };
    node.logger.error(
      { active: st.following, locks: node.engine.lockCount },
      'not taking the active role: this node never finished syncing from the active node it followed, which is not heard, and holds only part of its table; waiting for an active node to sync from (see docs/cluster.md, "A join cut short")',
    );
  } else {
    node.logger.warn(
      { active: st.partialHold?.from ?? null, heldMs: Math.round(now - (st.partialHold?.since ?? now)) },
      'partial table hold over: an active node, or the one this node followed, is heard again',
    );
    st.partialHold = null;
  }
  node.sendStatus();
}

/** For the cluster view: on an active, the higher-priority node it will hand the role back to, and why not yet. */
function noteReturnWait(node: DecisionContext, alive: readonly PeerState[], now: number): void {
  const st = node.state;
  if (st.phase !== 'active') {
    st.returnWait = null;
    return;
  }
  const verdict = returnVerdict({ priority: node.priority, instance: node.instanceId, returnHoldDownMs: node.returnHoldDownMs }, alive);
  st.returnWait = verdict.kind === 'wait' ? { verdict, at: now } : null;
}

/**
 * This process did not run for longer than the peer timeout (SIGSTOP, a VM pause, a swap
 * storm): the peers have taken it for dead and may have promoted another node, and what it
 * last heard of them is stale. It listens again for a peer timeout before deciding anything;
 * an active node stops serving meanwhile, so that a stale active never overrides the one
 * that took over while it was away.
 */
function afterFreeze(node: DecisionContext, frozenMs: number, stepOut: boolean, lapsedOnly: boolean): void {
  const st = node.state;
  const now = node.clock.now();
  st.discoverUntil = now + node.peerTimeoutMs;
  if (!stepOut) {
    node.logger.warn({ frozenMs: Math.round(frozenMs) }, 'this process was frozen longer than the peer timeout: listening to the peers again');
    return;
  }
  if (lapsedOnly) {
    node.logger.warn(
      { frozenMs: Math.round(frozenMs), grantWindowEndedMsAgo: Math.round(now - node.lease.until) },
      'heartbeats too far apart to be sure no peer has promoted (grant window passed): stepping out of the active role until the peers are heard',
    );
  } else {
    node.logger.warn(
      { frozenMs: Math.round(frozenMs) },
      'this process was frozen longer than the peer timeout: stepping out of the active role until the peers are heard',
    );
  }
  node.source.stop();
  node.driver.pause();
  // No grant either until it knows whether it keeps this state: another node may have taken over.
  node.engine.holdHandovers();
  node.setRoute(HOLD);
  st.phase = 'discovering';
  st.lastActiveInstance = node.instanceId;
  node.sendStatus();
}
