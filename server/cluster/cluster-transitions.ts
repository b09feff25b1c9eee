// The role changes of a cluster node, each one step by step. Kept apart from cluster-node.ts
// (which runs the timers and wires the parts) and cluster-decisions.ts (which decides) so that
// each procedure reads top to bottom. Each takes a TransitionContext: the node's state and the
// parts a role change drives, not the node itself.
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
import type { Logger } from 'pino';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { FailoverCause, NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { type DroppedClaims, dropUnreplicable } from './promotion-drops.ts';
import type { ReservingTokenSource } from '../../lib/tokens/token-source.ts';
import { HOLD, type Route, SERVE } from '../lines/routing.ts';
import type { FailoverTimeline } from './failover-timeline.ts';
import type { EtcdCoordination } from '../coordination/etcd-coordination.ts';
import { narrowToSuccessor, winAsSuccessor } from './etcd-handoff.ts';
import type { ClientRouting, EngineDriver, NodeClock } from './node-deps.ts';
import type { NodeState } from './node-state.ts';
import { redirectRoute } from './redirect-route.ts';
import type { MeshPeer } from './peer-mesh.ts';
import type { ReplicationSink } from './replication-sink.ts';
import type { ReplicationSource } from './replication-source.ts';
import type { TokenCeilings } from './token-ceilings.ts';
import { countSessionEnds, TransitionClaims, type TransitionStart } from './transition-report.ts';

/** What a handoff may be for: the causes its `handoff` message can carry. */
export type HandoffCause = Extract<PeerMessage, { t: 'handoff' }>['cause'];

/** How long an active waits for its successor's `promoted` before it serves again. */
export const HANDOFF_TIMEOUT_MS = 2_000;

/** What the role changes read and drive. */
export interface TransitionContext {
  readonly self: PeerConfig;
  readonly instanceId: string;
  readonly peerTimeoutMs: number;
  readonly state: NodeState;
  readonly engine: LockEngine;
  readonly tokens: ReservingTokenSource;
  readonly driver: EngineDriver;
  readonly clients: Pick<ClientRouting, 'redirectSessions' | 'moveSessions'>;
  readonly clock: NodeClock;
  readonly logger: Logger;
  readonly mesh: { readonly peers: ReadonlyMap<string, MeshPeer>; send(peer: MeshPeer, m: PeerMessage): void };
  readonly source: Pick<ReplicationSource, 'start' | 'stop' | 'streaming' | 'flush' | 'flushRenewals' | 'lastSeq' | 'lags'>;
  readonly sink: Pick<ReplicationSink, 'appliedSeq' | 'expectSnapshot' | 'claims' | 'clearThen' | 'cancelClear'>;
  readonly ceilings: Pick<TokenCeilings, 'fold' | 'promotionFloor'>;
  readonly timeline: Pick<FailoverTimeline, 'recordTransition' | 'closeLive'>;
  /** The etcd mode's coordination (the role comes from etcd); null in the peers mode. */
  readonly coordination: EtcdCoordination | null;
  /** Applies a listener route when it differs from the one in force. */
  setRoute(route: Route): void;
  sendStatus(): void;
  /** This node now serves as the active ('active', just before it serves) or no longer does ('standby'): ClusterNodeDeps.onRoleChange. */
  roleChanged(role: NodeRole): void;
}

/** What a sync request uses. */
export interface SyncContext {
  readonly state: Pick<NodeState, 'phase' | 'syncRequestedAt' | 'syncedWith'>;
  readonly clock: Clock;
  readonly logger: Pick<Logger, 'info'>;
  readonly mesh: { send(peer: MeshPeer, m: PeerMessage): void };
  readonly sink: Pick<ReplicationSink, 'expectSnapshot' | 'clearThen'>;
}

/** Asks `peer` (the active this node follows) for a snapshot: a standby re-syncs. */
export function requestSync(node: SyncContext, peer: MeshPeer): void {
  const st = node.state;
  st.syncRequestedAt = node.clock.now();
  if (st.phase === 'standby') st.phase = 'syncing';
  // Only the snapshot asked for now is buffered, and only from this peer (replication-sink.ts).
  node.sink.expectSnapshot(peer.config.id);
  // A table in sync with the active stays whole until the new snapshot begins: it is still the
  // one to promote with if the active dies first. Any other (a join cut short, a new active to
  // follow) is emptied first, a large one a slice per turn (table-clear.ts), and the snapshot
  // asked for only then: the table starts over without holding the loop for seconds.
  if (st.syncedWith !== null) node.mesh.send(peer, { t: 'sync' });
  else {
    const since = node.clock.now();
    node.sink.clearThen((slices) => {
      if (slices > 0) node.logger.info({ slices, ms: Math.round(node.clock.now() - since) }, 'mirror emptied a slice per turn before a new sync');
      node.mesh.send(peer, { t: 'sync' });
    });
  }
}

export function follow(node: TransitionContext, id: string): void {
  const peer = node.mesh.peers.get(id);
  if (peer === undefined) return;
  const st = node.state;
  // A mirror of another node's table is emptied by requestSync below, a slice per turn. A table
  // of this node's own (active, or stepped out of the role after a freeze) has clients' claims:
  // those end at once, in one reset, before the open connections are redirected.
  const ownTable = st.role() === 'active' || st.syncedWith === node.instanceId || st.lastActiveInstance === node.instanceId;
  if (node.state.role() === 'active') {
    // The entries this node still follows end here, sent while the stream is up.
    node.timeline.closeLive();
    node.source.stop();
    node.driver.pause();
    node.setRoute(HOLD);
  }
  node.roleChanged('standby');
  if (ownTable) {
    node.engine.reset();
    node.sink.claims.reset();
  }
  node.engine.releaseHandovers();
  // Everything this node knew of (its own blocks too, if it was active) may have been issued by
  // someone other than the new active: it reports that in its heartbeat from now on.
  node.ceilings.fold();
  node.state.fresh = false;
  node.state.following = id;
  node.state.lossAnnouncedFor = null;
  node.state.syncedWith = null;
  node.state.lastActiveInstance = node.state.statuses.get(id)?.instance ?? null;
  node.state.phase = 'syncing';
  node.setRoute(redirectRoute(peer.config));
  node.logger.info({ active: id }, 'following the active node');
  requestSync(node, peer);
  node.sendStatus();
}

/**
 * Takes the active role. `startedAt` (monotonic ms here) is the old active's last grant-capable
 * moment, from which the kept claims' stalls are measured. Resolves with what the transition
 * report needs, or null when the promotion did not complete.
 */
async function promote(node: TransitionContext, startedAt: number): Promise<TransitionStart | null> {
  // Taking the role back with its own live state (after a freeze nobody used): its waiters and
  // sessions are still connected here, so they stay.
  const ownState = node.state.syncedWith === node.instanceId;
  // Its table is what it serves from now on: a clear for a sync it asked for stops here.
  node.sink.cancelClear();
  node.state.phase = 'promoting';
  node.sendStatus();
  // No handover before the token floor is raised below: a lock freed by a drop whose next
  // waiter is a kept resumable claim waits for releaseHandovers.
  node.engine.holdHandovers();
  const claims = new TransitionClaims(() => node.clock.now(), startedAt);
  const carried = ownState ? null : claims;
  // The locks the stream gave a waiter or a session holder, rather than a walk of the whole table.
  const candidates = node.sink.claims.take();
  const dropped: DroppedClaims = ownState
    ? { waiters: 0, sessions: 0, keyedWaiters: new Map(), sessionWaiters: 0, keyedHolders: 0 }
    : dropUnreplicable(node.engine, carried, candidates);
  node.tokens.raiseFloor(node.ceilings.promotionFloor());
  // No grant from an unstored block (it could repeat tokens), and no node stuck promoting (it
  // would hold up the whole cluster): a block that cannot be stored in time ends the promotion.
  try {
    await boundedBy(node.tokens.reserveAhead(), PROMOTION_STORE_TIMEOUT_MS, 'storing a token block at promotion');
  } catch (err) {
    // No block can be made durable (disk full, I/O error, standbys not acknowledging): this node
    // does not take the role, and does not exit either. It listens again for two peer timeouts
    // before the decider may pick it again; meanwhile another candidate may promote.
    if (node.state.phase === 'promoting') {
      // Handovers stay held: nothing may be handed on from a block that is not stored. The next
      // follow (or a promotion that succeeds) releases them.
      node.state.phase = 'discovering';
      node.state.discoverUntil = node.clock.now() + 2 * node.peerTimeoutMs;
      node.sendStatus();
    }
    node.logger.error({ err }, 'promotion abandoned: no token block could be stored; this node will not serve until one can');
    return null;
  }
  // Whatever moved the phase on (a follow, a freeze) has set the gate its own way.
  if (node.state.phase !== 'promoting') return null;
  // A peer may have reported a higher ceiling while the block was being stored.
  node.tokens.raiseFloor(node.ceilings.promotionFloor());
  node.state.phase = 'active';
  node.state.following = null;
  node.state.syncedWith = node.instanceId;
  node.state.lastActiveInstance = node.instanceId;
  node.source.start();
  node.roleChanged('active');
  // Route first: heartbeats that waited in held sockets are read before leases are checked again.
  node.setRoute(SERVE);
  // A lock left free with a queue (freed during the old active's handoff, by the drops above, or
  // while the block was stored) goes to the head of its queue at releaseHandovers: one scan, here.
  // With no waiter left anywhere no lock can be free with a queue: no walk of the table then.
  if (node.engine.waiterCount > 0) node.engine.fileFreeQueues();
  node.engine.releaseHandovers();
  node.driver.resume();
  node.sendStatus();
  node.logger.info(
    {
      held: node.engine.heldCount,
      droppedWaiters: dropped.waiters,
      droppedSessions: dropped.sessions,
      carriedSessions: carried?.carried ?? 0,
      tokenFloor: node.tokens.highWater.toString(),
    },
    'promoted: this node is active',
  );
  return { claims, keyedHolders: dropped.keyedHolders, lost: dropped.sessions + dropped.sessionWaiters, keyedWaiters: dropped.keyedWaiters };
}

/** No active is alive and this node is the one to take over (a crash, or a fresh cluster). */
export async function promoteAfterLoss(node: TransitionContext): Promise<void> {
  const old = node.state.following;
  const oldPeer = old === null ? undefined : node.mesh.peers.get(old);
  const hadActive = node.state.lastActiveInstance !== null;
  // The last line heard from the old active: it may have granted until then, not (as far as this
  // node can know) after. Its clients noticed its death at that moment or later.
  const lastHeard = oldPeer !== undefined && Number.isFinite(oldPeer.lastSeen) ? oldPeer.lastSeen : node.clock.now();
  const start = await promote(node, lastHeard);
  if (start === null) return;
  node.state.fresh = !hadActive;
  if (hadActive && oldPeer !== undefined) {
    const gapMs = node.clock.now() - oldPeer.lastSeen;
    node.timeline.recordTransition({ at: node.clock.wallNow(), from: old, to: node.self.id, gapMs: round(gapMs), cause: 'crash' }, start);
  }
}

/** This standby is the successor in a graceful handoff. */
export async function takeOver(node: TransitionContext, peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause, lost = 0): Promise<void> {
  const t0 = node.clock.now();
  const refuse = (why: string) => {
    node.logger.warn({ from: peer.config.id, phase: node.state.phase, applied: node.sink.appliedSeq, seq }, `handoff refused: ${why}`);
    // Said at once, so the node handing off serves again now rather than after its timeout.
    node.mesh.send(peer, { t: 'handoff-refused' });
  };
  if (node.state.leaving || node.state.following !== peer.config.id || node.state.phase !== 'standby' || node.sink.appliedSeq !== seq) {
    refuse(node.state.leaving ? 'this node is shutting down' : 'not in sync with the node handing off');
    return;
  }
  // The etcd mode (design rule 7): the node handing off has resigned the role key; this node
  // campaigns at once (the in-sync set names only the two of them) and promotes once it holds it.
  if (node.coordination !== null) {
    if (!(await winAsSuccessor(node, node.coordination, HANDOFF_TIMEOUT_MS / 2))) {
      refuse('the role key could not be won in etcd in time');
      return;
    }
    if (node.state.following !== peer.config.id || node.state.phase !== 'standby' || node.sink.appliedSeq !== seq) {
      // Something moved on while the key was won: the decision timer promotes (or resigns) by the usual rules.
      refuse('this node changed while it won the role key');
      return;
    }
  }
  // The old active stopped granting pausedMs before it sent the handoff (its transit, well under
  // a millisecond on a LAN, is not counted: every client learns of the handoff after it).
  const start = await promote(node, t0 - pausedMs);
  if (start === null) return;
  start.lost += lost;
  // Recorded before `promoted` goes out, so the old active can name the entry to whoever asked for the handoff.
  const entry = node.timeline.recordTransition(
    { at: node.clock.wallNow(), from: peer.config.id, to: node.self.id, gapMs: round(pausedMs + (node.clock.now() - t0)), cause },
    start,
  );
  // Its last status says handing-off; it is becoming our standby, whatever its next status is.
  const last = node.state.statuses.get(peer.config.id);
  if (last !== undefined) node.state.statuses.set(peer.config.id, { ...last, phase: 'syncing', active: node.self.id });
  node.mesh.send(peer, { t: 'promoted', instance: node.instanceId, ...(entry.id === undefined ? {} : { failover: entry.id }) });
  peer.link?.flushNow();
  node.logger.info({ pausedMs, promoteMs: node.clock.now() - t0 }, 'took over by handoff');
}

/** How a handoff went, from the node that handed off. */
export interface HandoffResult {
  /** No active node (ms), as this node measured it: from its stop to the successor's answer. */
  gapMs: number;
  /** The successor's timeline entry for it (its client figures follow there), when the successor named it. */
  failover: string | null;
}

/** The active hands its role to `to`; resolves with the gap and the successor's entry, or null when `to` did not take over. */
export async function handoff(node: TransitionContext, to: string, cause: HandoffCause, timeoutMs = HANDOFF_TIMEOUT_MS): Promise<HandoffResult | null> {
  const peer = node.mesh.peers.get(to);
  if (peer === undefined || peer.link === null || node.state.phase !== 'active' || !node.source.streaming(to)) return null;
  const t0 = node.clock.now();
  node.state.phase = 'handing-off';
  node.setRoute(HOLD);
  node.driver.pause();
  node.engine.holdHandovers();
  // Session claims that are not resumable cannot move to the successor, which may grant their
  // locks the moment it promotes: their holders are told now (REDIRECT), and the releases ship
  // ahead of the handoff. Resumable ones stay connected, unread, and move with the lock table.
  const route = redirectRoute(peer.config);
  const lost = countSessionEnds(node.engine, () => node.clients.redirectSessions(route));
  node.sendStatus();
  node.source.flush();
  // Every resumable lease as it stands now (nothing renews them while clients are held).
  node.source.flushRenewals();
  const etcd = node.coordination;
  if (etcd !== null && !(await narrowToSuccessor(node, etcd, to, timeoutMs))) {
    // The key is still this node's (nothing was resigned): it serves again, and the keeper widens
    // the in-sync set again from its next check (etcd may name only the successor and this node).
    etcd.handoffCalledOff();
    serveAgainAfterHandoff(node);
    node.logger.warn(
      { to, cause },
      'handoff called off: the in-sync set could not be narrowed to the successor, or it did not acknowledge every event in time; staying active',
    );
    return null;
  }
  const promoted = awaitPromoted(node.state, to, timeoutMs);
  node.mesh.send(peer, { t: 'handoff', seq: node.source.lastSeq, pausedMs: node.clock.now() - t0, cause, lost });
  peer.link.flushNow();
  // The etcd mode: the successor campaigns from the message on (only it and this node are in the
  // in-sync set, and this node's holder is stopped), so the key goes only now: revoking it first
  // let the successor win by its ordinary campaign, before the message, and promote as after a crash.
  if (etcd !== null) await etcd.resign();
  const answer = await promoted;
  if (answer === false && etcd !== null) {
    // The role key is gone (resigned): this node cannot serve again without winning it back. It
    // steps out with its table and campaigns (the in-sync set names it and the successor, both
    // with every answered event): whichever wins serves, the other follows. If this node wins, its
    // keeper widens the set again once it is active.
    etcd.handoffCalledOff();
    // Not active until it wins the key back: as at any step-out, the reply gate lets go (what it
    // holds is dropped, those connections closed) and the keeper stops, so a win starts them
    // afresh (roleChanged('active') is a no-op while the last role said is still 'active').
    node.roleChanged('standby');
    if (node.state.phase === 'handing-off') {
      node.state.phase = 'discovering';
      node.state.lastActiveInstance = node.instanceId;
      node.source.stop();
      node.sendStatus();
    }
    if (!node.state.leaving && !node.state.stopped) etcd.holder.start();
    node.logger.warn({ to, cause }, 'handoff failed after the role key was resigned: campaigning again');
    return null;
  }
  if (answer === false) {
    serveAgainAfterHandoff(node);
    node.logger.warn({ to, cause }, 'handoff failed: the successor refused, went away or did not take over in time; staying active');
    return null;
  }
  const gapMs = round(node.clock.now() - t0);
  if (cause === 'api-handoff') node.state.yielded = true;
  // The successor has their claims now: each resumable session is told where (MOVED) and closed
  // without ending its claim here; follow's reset then forgets them without a word.
  // The etcd mode: the reply gate goes first (the successor has acked everything answered), so the
  // MOVED lines below leave ungated; written while it was on, follow() dropped them with their
  // connections and the sessions lost their claims (CI chaos seed 4926, a SIGTERM handoff).
  if (etcd !== null) node.roleChanged('standby');
  const moved = node.clients.moveSessions(route.session);
  follow(node, to);
  // The etcd mode: a standby again, it holds a lease and reads the role key (it campaigns only when it may).
  if (etcd !== null && !node.state.leaving && !node.state.stopped) etcd.holder.start();
  if (moved > 0) node.logger.info({ to, moved }, 'resumable sessions moved to the successor');
  node.logger.info({ to, cause, gapMs }, `handed off to ${to} (${cause}): ${gapMs} ms without an active node`);
  return { gapMs, failover: answer.failover };
}

/**
 * Waits for `promoted` from `peer`; resolves false on timeout, or when the peer refuses or its
 * link goes down (the message handler and the link-down handler resolve `handoffWaiter`).
 */
function awaitPromoted(state: Pick<NodeState, 'handoffWaiter'>, peer: string, timeoutMs: number): Promise<false | { failover: string | null }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), timeoutMs);
    const done = (ok: boolean, failover: string | null = null) => {
      clearTimeout(timer);
      if (state.handoffWaiter?.resolve === done) state.handoffWaiter = null;
      resolve(ok ? { failover } : false);
    };
    state.handoffWaiter = { peer, resolve: done };
  });
}

/** How long a promotion may take to store its first token block before the node gives up the promotion. */
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

/** A handoff that did not happen while this node still holds the role: it serves again as it was. */
function serveAgainAfterHandoff(node: TransitionContext): void {
  if (node.state.phase !== 'handing-off') return;
  node.state.phase = 'active';
  node.setRoute(SERVE);
  node.engine.releaseHandovers();
  node.driver.resume();
  node.sendStatus();
}
