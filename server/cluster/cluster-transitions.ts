// The role changes of a cluster node, each one step by step. Kept apart from cluster-node.ts
// (which receives messages and decides) so that each procedure reads top to bottom.
//
// The order inside each matters:
// - follow: stop serving (hold), replace the engine's state (reset) and only then redirect the
//   open connections, so none of them is told anything about a claim the reset ended;
// - promote: drop what cannot survive a change of node (waiters, session claims that are not
//   resumable) with handovers held, keep resumable session claims detached for their clients,
//   raise the token floor above every ceiling heard of and reserve a block the standbys have
//   stored, and only then serve (and hand on what the drops freed);
// - handoff: hold clients and the engine's clock, end the sessions that cannot move, ship the
//   last events and renewals, let the successor promote, and only then tell resumable sessions
//   where their claim went (MOVED) and redirect the rest.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { Claim } from '../../lib/engine/claim.ts';
import { CarriedClaims } from '../../lib/engine/carried-claims.ts';
import type { FailoverCause, FailoverView } from '../../lib/ops-api/api-types.ts';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import { HOLD, SERVE } from '../lines/routing.ts';
// Types only: cluster-node.ts imports this file, so a value import back would be a cycle.
import type { ClusterNode, ClusterNodeDeps } from './cluster-node.ts';
import { redirectRoute } from './redirect-route.ts';
import type { MeshPeer } from './peer-mesh.ts';

/** What a handoff may be for: the causes its `handoff` message can carry. */
export type HandoffCause = Extract<PeerMessage, { t: 'handoff' }>['cause'];

export function follow(node: ClusterNode, d: ClusterNodeDeps, id: string): void {
  const peer = node.mesh.peers.get(id);
  if (peer === undefined) return;
  if (node.role() === 'active') {
    node.source.stop();
    d.driver.pause();
    node.setRoute(HOLD);
  }
  d.engine.reset();
  d.engine.releaseHandovers();
  // Everything this node knew of (its own blocks too, if it was active) may have been issued by
  // someone other than the new active: it reports that in its heartbeat from now on.
  node.foldCeilings();
  node.fresh = false;
  node.following = id;
  node.lossAnnouncedFor = null;
  node.syncedWith = null;
  node.lastActiveInstance = node.statuses.get(id)?.instance ?? null;
  node.phase = 'syncing';
  node.setRoute(redirectRoute(peer.config));
  d.logger.info({ active: id }, 'following the active node');
  node.requestSync(peer);
  node.sendStatus();
}

/**
 * Waiters and session claims end with the node that had them: their clients re-send or
 * reconnect. Resumable session claims (holders and waiters that sent a claim key) stay, owned by
 * `carried`, for their clients to RESUME within their lease. The caller holds handovers: a lock
 * freed here goes to its next waiter only once this node has its token floor.
 */
export function dropUnreplicable(engine: LockEngine, carried: CarriedClaims | null = null): { waiters: number; sessions: number } {
  const waiters: Claim[] = [];
  const sessions: Claim[] = [];
  if (carried !== null) carried.carried = engine.keepDetached(carried);
  for (const lock of engine.allLocks()) {
    for (let w = lock.head; w !== null; w = w.next) if (w.owner !== carried) waiters.push(w);
    if (lock.holder !== null && lock.holder.protocol === 'session' && lock.holder.owner !== carried) sessions.push(lock.holder);
  }
  for (const w of waiters) engine.end(w);
  for (const h of sessions) engine.end(h);
  return { waiters: waiters.length, sessions: sessions.length };
}

async function promote(node: ClusterNode, d: ClusterNodeDeps): Promise<CarriedClaims | null> {
  // Taking the role back with its own live state (after a freeze nobody used): its waiters and
  // sessions are still connected here, so they stay.
  const ownState = node.syncedWith === d.instanceId;
  node.phase = 'promoting';
  node.sendStatus();
  // No handover before the token floor is raised below: a lock freed by a drop whose next
  // waiter is a kept resumable claim waits for releaseHandovers.
  d.engine.holdHandovers();
  const carried = ownState ? null : new CarriedClaims();
  const dropped = ownState ? { waiters: 0, sessions: 0 } : dropUnreplicable(d.engine, carried);
  d.tokens.raiseFloor(node.promotionFloor());
  // No grant from an unstored block (it could repeat tokens), and no node stuck promoting (it
  // would hold up the whole cluster): a block that cannot be stored in time ends the promotion.
  try {
    await boundedBy(d.tokens.reserveAhead(), PROMOTION_STORE_TIMEOUT_MS, 'storing a token block at promotion');
  } catch (err) {
    // No block can be made durable (disk full, I/O error, standbys not acknowledging): this node
    // does not take the role, and does not exit either. It listens again for two peer timeouts
    // before the decider may pick it again; meanwhile another candidate may promote.
    if (node.phase === 'promoting') {
      // Handovers stay held: nothing may be handed on from a block that is not stored. The next
      // follow (or a promotion that succeeds) releases them.
      node.phase = 'discovering';
      node.discoverUntil = d.clock.now() + 2 * d.cluster.peerTimeoutMs;
      node.sendStatus();
    }
    d.logger.error({ err }, 'promotion abandoned: no token block could be stored; this node will not serve until one can');
    return null;
  }
  // Whatever moved the phase on (a follow, a freeze) has set the gate its own way.
  if (node.phase !== 'promoting') return null;
  // A peer may have reported a higher ceiling while the block was being stored.
  d.tokens.raiseFloor(node.promotionFloor());
  node.phase = 'active';
  node.following = null;
  node.syncedWith = d.instanceId;
  node.lastActiveInstance = d.instanceId;
  node.source.start();
  // Route first: heartbeats that waited in held sockets are read before leases are checked again.
  node.setRoute(SERVE);
  // A lock left free with a queue (freed during the old active's handoff, by the drops above, or
  // while the block was stored) goes to the head of its queue at releaseHandovers: one scan, here.
  d.engine.fileFreeQueues();
  d.engine.releaseHandovers();
  d.driver.resume();
  node.sendStatus();
  d.logger.info(
    {
      held: d.engine.heldCount,
      droppedWaiters: dropped.waiters,
      droppedSessions: dropped.sessions,
      carriedSessions: carried?.carried ?? 0,
      tokenFloor: d.tokens.highWater.toString(),
    },
    'promoted: this node is active',
  );
  return carried ?? new CarriedClaims();
}

/** A failover entry with the resumable claims this node kept; their fate is filled in as it comes (ClusterNode.carried). */
function withCarried(node: ClusterNode, f: FailoverView, carried: CarriedClaims): FailoverView {
  const entry: FailoverView = { ...f, claimsCarried: carried.carried, claimsResumed: 0, claimsExpired: 0, claimsEnded: 0 };
  node.carried = { entry, tally: carried };
  return entry;
}

/** No active is alive and this node is the one to take over (a crash, or a fresh cluster). */
export async function promoteAfterLoss(node: ClusterNode, d: ClusterNodeDeps): Promise<void> {
  const old = node.following;
  const oldPeer = old === null ? undefined : node.mesh.peers.get(old);
  const hadActive = node.lastActiveInstance !== null;
  const carried = await promote(node, d);
  if (carried === null) return;
  node.fresh = !hadActive;
  if (hadActive && oldPeer !== undefined) {
    const gapMs = d.clock.now() - oldPeer.lastSeen;
    node.recordFailover(withCarried(node, { at: d.wallNow(), from: old, to: node.self.id, gapMs: round(gapMs), cause: 'crash' }, carried));
  }
}

/** This standby is the successor in a graceful handoff. */
export async function takeOver(node: ClusterNode, d: ClusterNodeDeps, peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause): Promise<void> {
  const t0 = d.clock.now();
  if (node.leaving || node.following !== peer.config.id || node.phase !== 'standby' || node.sink.appliedSeq !== seq) {
    const why = node.leaving ? 'this node is shutting down' : 'not in sync with the node handing off';
    d.logger.warn({ from: peer.config.id, phase: node.phase, applied: node.sink.appliedSeq, seq }, `handoff refused: ${why}`);
    // Said at once, so the node handing off serves again now rather than after its timeout.
    node.mesh.send(peer, { t: 'handoff-refused' });
    return;
  }
  const carried = await promote(node, d);
  if (carried === null) return;
  // Its last status says handing-off; it is becoming our standby, whatever its next status is.
  const last = node.statuses.get(peer.config.id);
  if (last !== undefined) node.statuses.set(peer.config.id, { ...last, phase: 'syncing', active: node.self.id });
  node.mesh.send(peer, { t: 'promoted', instance: d.instanceId });
  peer.link?.flushNow();
  d.logger.info({ pausedMs, promoteMs: d.clock.now() - t0 }, 'took over by handoff');
  node.recordFailover(
    withCarried(node, { at: d.wallNow(), from: peer.config.id, to: node.self.id, gapMs: round(pausedMs + (d.clock.now() - t0)), cause }, carried),
  );
}

/** The active hands its role to `to`; resolves with the gap (ms), or null when `to` did not take over. */
export async function handoff(node: ClusterNode, d: ClusterNodeDeps, to: string, cause: HandoffCause, timeoutMs: number): Promise<number | null> {
  const peer = node.mesh.peers.get(to);
  if (peer === undefined || peer.link === null || node.phase !== 'active' || !node.source.streaming(to)) return null;
  const t0 = d.clock.now();
  node.phase = 'handing-off';
  node.setRoute(HOLD);
  d.driver.pause();
  d.engine.holdHandovers();
  // Session claims that are not resumable cannot move to the successor, which may grant their
  // locks the moment it promotes: their holders are told now (REDIRECT), and the releases ship
  // ahead of the handoff. Resumable ones stay connected, unread, and move with the lock table.
  const route = redirectRoute(peer.config);
  d.redirectSessions(route);
  node.sendStatus();
  node.source.flush();
  // Every resumable lease as it stands now (nothing renews them while clients are held).
  node.source.flushRenewals();
  const promoted = node.awaitPromoted(to, timeoutMs);
  node.mesh.send(peer, { t: 'handoff', seq: node.source.lastSeq, pausedMs: d.clock.now() - t0, cause });
  peer.link.flushNow();
  const ok = await promoted;
  if (!ok) {
    if (node.phase === 'handing-off') {
      node.phase = 'active';
      node.setRoute(SERVE);
      d.engine.releaseHandovers();
      d.driver.resume();
      node.sendStatus();
    }
    d.logger.warn({ to, cause }, 'handoff failed: the successor refused, went away or did not take over in time; staying active');
    return null;
  }
  const gapMs = round(d.clock.now() - t0);
  if (cause === 'api-handoff') node.yielded = true;
  // The successor has their claims now: each resumable session is told where (MOVED) and closed
  // without ending its claim here; follow's reset then forgets them without a word.
  const moved = d.moveSessions(route.session);
  follow(node, d, to);
  if (moved > 0) d.logger.info({ to, moved }, 'resumable sessions moved to the successor');
  d.logger.info({ to, cause, gapMs }, `handed off to ${to} (${cause}): ${gapMs} ms without an active node`);
  return gapMs;
}

/** How long a promotion may take to store its first token block before the node gives up (exit 70). */
const PROMOTION_STORE_TIMEOUT_MS = 5_000;

function boundedBy<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
