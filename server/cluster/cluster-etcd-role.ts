// The etcd mode's role rules (docs/cluster.md "Two modes"): in that mode the role comes from etcd,
// not from the peers' decider. Run by the decision timer (cluster-decisions.ts) in place of
// decideRole, by the holder's events (etcd-role-holder.ts), and asked by the holder before each
// campaign. The peers mode never reaches this file.
//
// - Active only while holding: a node promotes (the usual promote path) only once its holder holds
//   `<prefix>/active` under its own lease, and steps out (as after a freeze: handovers held, clients
//   held) as soon as the holder says the lease or the key is gone. The split-brain, freeze and
//   grant-window rules of the peers mode make no node active here.
// - The engine's grant window is the holder's permission (permittedUntil, set on each 'until'
//   event); the peers' heartbeat window is not used. A lapse (no keep-alive confirmed in time)
//   shuts grants by itself; a later confirmed keep-alive opens them again.
// - Campaigns: only a node with a full table (a standby synced with the active it followed, an
//   active that stepped out with its own table, or a node of a new cluster that never stored an
//   in-sync set) and not leaving; the holder adds the in-sync set's word and the priority stagger.
// - Standbys follow whoever etcd names as the holder, over the peer mesh as before.
import type { HolderEvent } from '../coordination/etcd-role-holder.ts';
import type { EtcdCoordination } from '../coordination/etcd-coordination.ts';
import { type PeerState, returnVerdict } from '../../lib/cluster/role-decider.ts';
import { HOLD } from '../lines/routing.ts';
import { mayCampaign as campaignRule } from '../../lib/cluster/etcd-campaign-rule.ts';
import { follow, handoff, promoteAfterLoss, type TransitionContext } from './cluster-transitions.ts';

/** What the etcd mode's rules read and drive: the transitions' context, and the coordination. */
export interface EtcdRoleContext extends TransitionContext {
  /** This node's priority (0 = highest). */
  readonly priority: number;
  /** How long a higher-priority standby must be steady before this node, active, hands the role back to it. */
  readonly returnHoldDownMs: number;
  readonly coordination: EtcdCoordination;
}

/** Whether this node may campaign now (lib/cluster/etcd-campaign-rule.ts); `storedInSync` as in CoordinationHooks. */
export function mayCampaign(node: EtcdRoleContext, storedInSync: ReadonlySet<string> | null | undefined): boolean {
  const st = node.state;
  return campaignRule(
    {
      phase: st.phase,
      instance: node.instanceId,
      syncedWith: st.syncedWith,
      lastActiveInstance: st.lastActiveInstance,
      stopped: st.stopped,
      leaving: st.leaving,
      partial: st.partialHold !== null,
      discovered: node.clock.now() >= st.discoverUntil,
    },
    storedInSync,
  );
}

/** The holder's word on what this node may do. */
export function onHolderEvent(node: EtcdRoleContext, event: HolderEvent): void {
  const st = node.state;
  switch (event.kind) {
    case 'owner':
      node.coordination.roleWon();
      // `at`: epoch ms, before the grant window opens (the 'until' event follows): tests line it up with a predecessor's `endedAt`.
      node.logger.info({ phase: st.phase, at: node.clock.wallNow() }, 'holding the active role key in etcd');
      return;
    case 'until':
      // The engine refuses grants past this by itself (a lapse needs no call); a standby that holds
      // the key is not serving yet, so the window opens nothing before its promotion.
      node.engine.setGrantWindow(event.until);
      return;
    case 'released':
      node.engine.setGrantWindow(Number.NEGATIVE_INFINITY);
      if (st.phase === 'active' || st.phase === 'promoting') stepOut(node, event.why);
      return;
  }
}

/** The decision timer's part in the etcd mode, after the routes are set (cluster-decisions.ts). */
export function decideByEtcd(node: EtcdRoleContext, alive: readonly PeerState[], now: number): void {
  const st = node.state;
  const holder = node.coordination.holder;
  if (holder.holding) {
    if (st.phase === 'active') {
      noteLapse(node, now);
      if (st.handoffWaiter !== null) return;
      // Before the reply gate (etcd-gate) keeps the in-sync set, it follows the synced standbys.
      node.coordination.keepInSync(syncedStandbys(node, alive));
      const back = returnVerdict({ priority: node.priority, instance: node.instanceId, returnHoldDownMs: node.returnHoldDownMs }, alive);
      if (back.kind === 'handoff' && !st.leaving) void handoff(node, back.to, 'priority-return');
      return;
    }
    if (st.phase === 'promoting' || st.phase === 'handing-off' || st.etcdTakeOver) return;
    if (!mayCampaign(node, undefined)) {
      // Won with a table that is not whole (it changed since the campaign): give the role up.
      node.logger.error({ phase: st.phase }, 'holding the role key without a whole table: resigning it');
      void node.coordination.resign().then(() => {
        if (!st.stopped) node.coordination.holder.start();
      });
      return;
    }
    void promoteAfterLoss(node);
    return;
  }
  if (st.phase === 'active') {
    stepOut(node, 'this node no longer holds the role key in etcd');
    return;
  }
  if (st.phase === 'promoting' || st.phase === 'handing-off') return;
  const named = holder.seenHolder;
  if (named !== null && named !== node.self.id && st.following !== named) follow(node, named);
}

/** A lapse of the active's permission (etcd unreachable or without quorum): said once when it starts and once when it ends. */
function noteLapse(node: EtcdRoleContext, now: number): void {
  const st = node.state;
  const granting = node.coordination.holder.mayGrant(now);
  if (!granting && st.grantsLapsedAt === null) {
    st.grantsLapsedAt = now;
    // `endedAt`: the epoch ms the engine's grant window ended (the engine refused grants from then on by itself).
    const endedAt = Math.round(node.clock.wallNow() - (now - node.coordination.holder.permittedUntil));
    node.logger.warn({ endedAt, reason: node.coordination.blockedReason(now) }, 'grants stopped: the etcd role lease is not confirmed');
    node.sendStatus();
  } else if (granting && st.grantsLapsedAt !== null) {
    const lapsedMs = Math.round(now - st.grantsLapsedAt);
    st.grantsLapsedAt = null;
    // Locks that came free meanwhile go to the head of their queues now.
    node.engine.retryHeldGrants();
    node.driver.resume();
    node.logger.info({ lapsedMs }, 'grants resume: a keep-alive proved the etcd role lease lived through the lapse');
  }
}

/** The standbys synced with this active and streamed to (the in-sync set before the reply gate keeps it). */
function syncedStandbys(node: EtcdRoleContext, alive: readonly PeerState[]): string[] {
  return alive.filter((p) => p.phase === 'standby' && p.syncedWith === node.instanceId && node.source.streaming(p.id)).map((p) => p.id);
}

/**
 * The role is gone (the lease expired at etcd, or the key is not under it): stop serving at once,
 * as after a freeze, and keep the table until it is known who holds the role now (decideByEtcd
 * then follows the holder etcd names, or this node takes the role back with its own table).
 */
export function stepOut(node: EtcdRoleContext, why: string): void {
  const st = node.state;
  node.logger.warn({ why }, 'stepping out of the active role: the etcd role key is no longer this node’s');
  node.engine.setGrantWindow(Number.NEGATIVE_INFINITY);
  node.source.stop();
  node.driver.pause();
  node.engine.holdHandovers();
  node.setRoute(HOLD);
  st.phase = 'discovering';
  st.grantsLapsedAt = null;
  st.lastActiveInstance = node.instanceId;
  node.sendStatus();
}
