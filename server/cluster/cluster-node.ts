// One node of a Baton cluster: its phase (discovering → syncing → standby ⇄ promoting → active
// → handing-off), the transitions between them, and what each means for the lock listeners
// (serve, redirect to the active, or hold), the engine (a mirror on a standby, live on the
// active) and the token sequence. Who should be active is decided by lib/cluster/role-decider.ts
// from the peers' status heartbeats; this file carries decisions out.
import type { Logger } from 'pino';
import type { ClusterOptions, PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { PeerMessage, StatusMessage } from '../../lib/cluster/peer-messages.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { BlockTokenSource } from '../../lib/tokens/token-source.ts';
import { isActivePhase } from '../../lib/cluster/cluster-vocabulary.ts';
import type { ClusterView, FailoverCause, FailoverView, NodePhase, NodeRole } from '../../lib/ops-api/api-types.ts';
import type { AdminOp, AdminResult } from '../daemon/daemon-facade.ts';
import { HOLD, type Route, sameRoute } from '../lines/routing.ts';
import { CeilingGuard } from './ceiling-guard.ts';
import type { CarriedClaims } from '../../lib/engine/carried-claims.ts';
import { ClusterAdmin } from './cluster-admin.ts';
import { handlePeerMessage } from './peer-message-handler.ts';
import { type MeshPeer, PeerMesh } from './peer-mesh.ts';
import { ReplicationSink } from './replication-sink.ts';
import { LoopDelayWatch } from './loop-delay.ts';
import { ReplicationSource } from './replication-source.ts';
import * as transitions from './cluster-transitions.ts';
import { decide, noticeFreeze } from './cluster-decisions.ts';
import { clusterView } from './cluster-view.ts';
import { RoleLease } from './role-lease.ts';
import type { ClusterBackend } from '../console-services/cluster-backend.ts';

export const DECIDE_EVERY_MS = 25;
const HANDOFF_TIMEOUT_MS = 2_000;
const MAX_FAILOVERS = 100;

export interface ClusterNodeDeps {
  cluster: ClusterOptions;
  instanceId: string;
  adminToken: string;
  engine: LockEngine;
  tokens: BlockTokenSource;
  clock: Clock;
  /** Epoch ms now (failover timestamps, last-seen times for people). */
  wallNow(): number;
  setRoute(route: Route): void;
  /** Ends every session claim that is not resumable with a redirect there, now (other clients keep the route). */
  redirectSessions(route: Extract<Route, { kind: 'redirect' }>): void;
  /** Tells every resumable session its claim moved to `sessionAddress` (MOVED) and closes it; returns how many. */
  moveSessions(sessionAddress: string): number;
  driver: { pause(): void; resume(): void };
  /** Persists a ceiling a standby is told about (serialized with the token source's own saves). */
  persistCeiling(ceiling: bigint): Promise<void>;
  /** The highest ceiling stored in this node's data dir. */
  storedCeiling(): bigint;
  /** Runs a force-release or kick on this node's engine (the active). */
  runLocally(op: AdminOp & { op: 'force-release' | 'kick' }): AdminResult;
  audit(who: string, op: AdminOp, result: AdminResult): void;
  logger: Logger;
}

export class ClusterNode implements ClusterBackend {
  phase: NodePhase = 'discovering';
  yielded = false;
  /** Shutting down: hands off and never takes the active role again. */
  leaving = false;
  /**
   * Active with state of its own making only: it promoted at start-up with no active to follow,
   * and no standby has synced from it since. Between two actives, a fresh one steps down.
   */
  fresh = false;
  /** The peer this node takes as active (null when none is known, or when it is active itself). */
  following: string | null = null;
  /** Instance of the active whose state this node's mirror holds. */
  syncedWith: string | null = null;
  lastActiveInstance: string | null = null;
  readonly failovers: FailoverView[] = [];
  /** The resumable claims this node kept at its last promotion, and the timeline entry that reports them. */
  carried: { entry: FailoverView; tally: CarriedClaims } | null = null;
  readonly mesh: PeerMesh;
  readonly source: ReplicationSource;
  readonly sink: ReplicationSink;
  readonly self: PeerConfig;
  readonly priority: number;
  readonly statuses = new Map<string, StatusMessage>();
  /** When each peer's last status was received (monotonic ms). */
  readonly statusAt = new Map<string, number>();
  /** Since when this active waits for its peers to confirm it after its grant window lapsed; null when not. */
  reconfirmSince: number | null = null;
  readonly admin: ClusterAdmin;
  /** Every ceiling a peer sends passes here before it raises anything (ceiling-guard.ts). */
  readonly ceilings: CeilingGuard;
  /** Until then, the node only listens (start-up, and after this process was frozen). Set at start(). */
  discoverUntil = 0;
  /** When the last decision ran (a longer gap than the peer timeout means this process was frozen). Set at start(). */
  lastDecideAt = 0;
  private readonly hbMs: number;
  get heartbeatMs(): number {
    return this.hbMs;
  }
  /** How long this node may grant (the engine's grant window): see role-lease.ts. */
  readonly lease: RoleLease;
  private timers: NodeJS.Timeout[] = [];
  /** This process's event-loop delays (shown in the cluster view). */
  readonly loopDelay = new LoopDelayWatch();
  /** Set while a handoff waits for its successor's `promoted`. */
  handoffWaiter: { peer: string; resolve(ok: boolean): void } | null = null;
  /** Lower-priority peers seen active at the same time as this node (split brain), by id. */
  private readonly rivals = new Set<string>();
  stopped = false;
  private route: Route | null = null;
  /** The highest ceiling any peer has reported knowing of (see promotionFloor), and who reported it. */
  peerCeiling = 0n;
  peerCeilingFrom = '';
  /** Ceilings the active this node follows now sent it (ceil messages, its snapshot). */
  seenCeiling = 0n;
  /**
   * The highest ceiling of token ranges that nodes other than the active this node follows may
   * have issued from: this node's own store at start, its own blocks while it was active, and
   * what earlier actives sent it. A standby reports this (not what the current active sent it)
   * in its heartbeat, so an active only raises its token floor for ranges it did not reserve.
   */
  foreignCeiling = 0n;

  constructor(private readonly d: ClusterNodeDeps) {
    const { config, nodeId, peerTimeoutMs } = d.cluster;
    this.priority = config.peers.findIndex((p) => p.id === nodeId);
    const self = config.peers[this.priority];
    // serve-command.ts takes the node id from the config's own peer list.
    if (self === undefined) throw new RangeError(`node id ${nodeId} is not one of the cluster's peers`);
    this.self = self;
    this.hbMs = Math.max(20, Math.min(250, Math.floor(peerTimeoutMs / 5)));
    this.lease = new RoleLease(peerTimeoutMs, d.clock.now());
    this.sink = new ReplicationSink(d.engine);
    this.admin = new ClusterAdmin(this, d);
    this.ceilings = new CeilingGuard({ own: () => this.knownCeiling(), now: () => d.clock.now(), logger: d.logger });
    this.source = new ReplicationSource({
      engine: d.engine,
      clock: d.clock,
      instanceId: d.instanceId,
      ackTimeoutMs: peerTimeoutMs,
      ceiling: () => this.knownCeiling(),
      failovers: () => {
        this.refreshCarried();
        return this.failovers;
      },
      onStreamDropped: (id, reason) => d.logger.warn({ peer: id, reason }, 'replication stream dropped'),
      onSnapshotSent: (id, sent) => d.logger.info({ peer: id, ...sent }, 'snapshot streamed to a standby'),
    });
    const listen = d.cluster.peerListen ?? { host: this.self.host, port: this.self.peerPort };
    this.mesh = new PeerMesh({
      selfId: nodeId,
      selfInstance: d.instanceId,
      peers: config.peers,
      listen,
      adminToken: d.adminToken,
      connectTimeoutMs: Math.max(100, Math.floor(peerTimeoutMs / 2)),
      peerTimeoutMs,
      now: () => d.clock.now(),
      logger: d.logger,
      onMessage: (peer, m) => this.onMessage(peer, m),
      onLinkUp: (peer) => this.onLinkUp(peer),
      onLinkDown: (peer, reason) => this.onLinkDown(peer, reason),
    });
  }

  /** Applies a listener route when it differs from the one in force. */
  setRoute(route: Route): void {
    const r = this.route;
    if (r !== null && sameRoute(r, route)) return;
    this.route = route;
    this.d.setRoute(route);
  }

  async start(): Promise<void> {
    this.foreignCeiling = this.d.storedCeiling();
    this.d.driver.pause();
    this.setRoute(HOLD);
    await this.mesh.start();
    // Discovery counts from when the peer port is open, not from construction, and lasts long
    // enough for a peer's dial in flight to time out and reach us (connect timeout + re-dial).
    this.discoverUntil = this.d.clock.now() + this.d.cluster.peerTimeoutMs * 1.5;
    this.lastDecideAt = this.d.clock.now();
    this.lease.reset(this.lastDecideAt);
    this.d.engine.setGrantWindow(this.lease.until);
    this.timers.push(setInterval(() => this.heartbeat(), this.hbMs));
    this.timers.push(setInterval(() => this.decide(), DECIDE_EVERY_MS));
    this.loopDelay.start();
    this.d.logger.info({ node: this.self.id, priority: this.priority, peerTimeoutMs: this.d.cluster.peerTimeoutMs }, 'cluster node started: discovering peers');
  }

  get instanceId(): string {
    return this.d.instanceId;
  }

  peersInOrder(): readonly PeerConfig[] {
    return this.d.cluster.config.peers;
  }

  view(): ClusterView {
    this.refreshCarried();
    return clusterView(this, this.d.clock.now(), this.d.wallNow());
  }

  /** Writes how the kept resumable claims ended so far into their timeline entry (a snapshot sends it on too). */
  refreshCarried(): void {
    const c = this.carried;
    if (c === null) return;
    c.entry.claimsResumed = c.tally.resumed;
    c.entry.claimsExpired = c.tally.expired;
    c.entry.claimsEnded = c.tally.ended;
  }

  role(): NodeRole {
    return isActivePhase(this.phase) ? 'active' : 'standby';
  }

  /** The peer id of the active node as this node knows it. */
  activeId(): string | null {
    return this.role() === 'active' ? this.self.id : this.followingAlive();
  }

  /** The peer this node follows, while it hears it; null otherwise. */
  followingAlive(): string | null {
    return this.following !== null && this.isAlive(this.following) ? this.following : null;
  }

  isAlive(id: string): boolean {
    const peer = this.mesh.peers.get(id);
    return peer !== undefined && this.d.clock.now() - peer.lastSeen <= this.d.cluster.peerTimeoutMs && this.statuses.has(id);
  }

  /** Standbys an active could hand off to now: alive, streaming, in priority order. */
  handoffTargets(): string[] {
    if (this.phase !== 'active') return [];
    return [...this.mesh.peers.values()]
      .filter((p) => this.isAlive(p.config.id) && this.source.streaming(p.config.id) && this.statuses.get(p.config.id)?.leaving !== true)
      .map((p) => p.config.id);
  }

  knownCeiling(): bigint {
    let c = this.d.tokens.reservedCeiling;
    const stored = this.d.storedCeiling();
    if (stored > c) c = stored;
    if (this.sink.maxToken > c) c = this.sink.maxToken;
    if (this.seenCeiling > c) c = this.seenCeiling;
    if (this.foreignCeiling > c) c = this.foreignCeiling;
    return c;
  }

  /** This node stops taking its tokens' range from the active it followed (or from itself): all it knew becomes foreign. */
  foldCeilings(): void {
    this.foreignCeiling = this.knownCeiling();
    this.seenCeiling = 0n;
    this.sink.maxToken = 0n;
  }

  /** Every ceiling this node has heard of, its peers' included: a promotion starts above it. */
  promotionFloor(): bigint {
    const c = this.knownCeiling();
    // A peer's word more than a block above all this node has seen is not obeyed (ceiling-guard.ts).
    return this.peerCeiling > c && this.ceilings.admit(this.peerCeiling, this.peerCeilingFrom, 'status') ? this.peerCeiling : c;
  }

  // --- admin (cluster-admin.ts) ---

  run(op: AdminOp, who: string): Promise<AdminResult> {
    return this.admin.run(op, who);
  }

  yieldedNodes(): string[] {
    return this.admin.yieldedNodes();
  }

  // --- shutdown ---

  /** SIGTERM/SIGINT of the active: hand off to the best standby first (bounded), then the daemon drains. */
  async beforeShutdown(): Promise<void> {
    this.leaving = true;
    this.sendStatus();
    // A promotion or a handoff under way finishes first (each is bounded), then it is decided.
    for (let waited = 0; (this.phase === 'promoting' || this.phase === 'handing-off') && waited < 5_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (this.phase === 'active') {
      const to = this.handoffTargets()[0];
      if (to !== undefined) await this.handoff(to, 'signal');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.loopDelay.stop();
    this.source.stop();
    await this.mesh.stop();
  }

  // --- peer messages ---

  /** Before anything that may run ahead of the decision timer when the process wakes: see noticeFreeze. */
  private wake(): void {
    if (this.timers.length > 0 && !this.stopped) noticeFreeze(this, this.d);
  }

  private onLinkUp(peer: MeshPeer): void {
    this.wake();
    // Debug: a refused or flapping link would fill the log (refusals are logged as errors, rate-limited).
    this.d.logger.debug({ peer: peer.config.id, instance: peer.link?.peerInstance }, 'peer link up');
    // A restarted peer is a new process: what its previous run said (say, that it was active) no longer holds.
    if (this.statuses.get(peer.config.id)?.instance !== peer.link?.peerInstance) this.statuses.delete(peer.config.id);
    this.sendStatusTo(peer);
    // Back in touch with the active we follow: the stream was cut, so start over from a snapshot.
    if (this.following === peer.config.id && this.phase !== 'active') this.requestSync(peer);
  }

  private onLinkDown(peer: MeshPeer, reason: string): void {
    // Worth an info line when the peer was heard for a while; a link that never got going is debug.
    const level = this.d.clock.now() - peer.lastSeen < this.d.cluster.peerTimeoutMs && this.statuses.has(peer.config.id) ? 'info' : 'debug';
    this.d.logger[level]({ peer: peer.config.id, reason }, 'peer link down');
    // Do not send clients to a node this one just lost touch with (it may have died): hold them.
    if (this.following === peer.config.id && (this.phase === 'standby' || this.phase === 'syncing')) this.setRoute(HOLD);
    this.source.removeStandby(peer.config.id);
    this.sink.dropSnapshot(peer.config.id);
    this.admin.forwarder.onLinkDown(peer.config.id);
    if (this.handoffWaiter?.peer === peer.config.id) this.handoffWaiter.resolve(false);
  }

  private onMessage(peer: MeshPeer, m: PeerMessage): void {
    this.wake();
    handlePeerMessage(this, this.d, peer, m);
  }

  // --- status and decisions ---

  private statusMessage(): StatusMessage {
    const active = this.role() === 'active';
    const known = this.knownCeiling();
    return {
      t: 'status',
      id: this.self.id,
      instance: this.d.instanceId,
      phase: this.phase,
      active: this.activeId(),
      syncedWith: active ? this.d.instanceId : this.syncedWith,
      yielded: this.yielded,
      leaving: this.leaving,
      fresh: active && this.fresh,
      ceiling: (active ? known : this.foreignCeiling).toString(),
      known: known.toString(),
      ...(active ? { lags: this.source.lags() } : {}),
    };
  }

  sendStatus(): void {
    this.wake();
    if (!this.stopped) this.mesh.broadcast(this.statusMessage());
  }

  /**
   * The heartbeat timer: a status to every peer, then the grant window moves on from it. A
   * lapsed active has stepped out in sendStatus (noticeFreeze) before this moves anything.
   */
  private heartbeat(): void {
    this.sendStatus();
    if (this.stopped) return;
    this.lease.beat(this.d.clock.now());
    // While the peers are asked to confirm this node after a lapse, the window stays shut.
    if (this.reconfirmSince === null) this.d.engine.setGrantWindow(this.lease.until);
  }

  private sendStatusTo(peer: MeshPeer): void {
    this.wake();
    this.mesh.send(peer, this.statusMessage());
  }

  private decide(): void {
    if (!this.stopped) decide(this, this.d);
  }

  /**
   * Another node reports itself active while this one is (a healed partition). Recorded when its
   * status arrives, not at the next decision: the other node steps down at once, and its next
   * status would hide that there were two actives.
   */
  noteRival(peer: MeshPeer, s: StatusMessage): void {
    const rival = s.phase === 'active' && peer.priority > this.priority;
    if (rival && !this.rivals.has(s.id)) {
      this.rivals.add(s.id);
      this.recordFailover({ at: this.d.wallNow(), from: s.id, to: this.self.id, gapMs: 0, cause: 'split-brain' });
    } else if (!rival) this.rivals.delete(s.id);
  }

  // --- transitions: see cluster-transitions.ts ---
  follow(id: string): void {
    transitions.follow(this, this.d, id);
  }
  /** When this process last ran again after a freeze (monotonic ms); silence counts from here at the earliest. */
  resumedAt = Number.NEGATIVE_INFINITY;
  /** The followed node whose silence this node has announced (see cluster-decisions.ts). */
  lossAnnouncedFor: string | null = null;
  /** When the refusal to promote was last logged (monotonic ms). */
  refusalNotedAt = Number.NEGATIVE_INFINITY;
  /** Monotonic time of the last sync request. */
  syncRequestedAt = Number.NEGATIVE_INFINITY;
  requestSync(peer: MeshPeer): void {
    this.syncRequestedAt = this.d.clock.now();
    if (this.phase === 'standby') this.phase = 'syncing';
    // Only the snapshot asked for now is buffered, and only from this peer (replication-sink.ts).
    this.sink.expectSnapshot(peer.config.id);
    this.mesh.send(peer, { t: 'sync' });
  }
  promoteAfterLoss(): Promise<void> {
    return transitions.promoteAfterLoss(this, this.d);
  }
  takeOver(peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause): Promise<void> {
    return transitions.takeOver(this, this.d, peer, seq, pausedMs, cause);
  }
  handoff(to: string, cause: transitions.HandoffCause): Promise<number | null> {
    return transitions.handoff(this, this.d, to, cause, HANDOFF_TIMEOUT_MS);
  }
  /** Waits for `promoted` from `peer`; resolves false on timeout or link loss. */
  awaitPromoted(peer: string, timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        if (this.handoffWaiter?.resolve === done) this.handoffWaiter = null;
        resolve(ok);
      };
      this.handoffWaiter = { peer, resolve: done };
    });
  }

  recordFailover(f: FailoverView): void {
    this.addFailover(f);
    this.source.broadcastFailover(f);
    this.d.logger.info(f, `failover: ${f.from ?? '(none)'} -> ${f.to} (${f.cause}), ${f.gapMs.toFixed(1)} ms without an active node`);
  }

  addFailover(f: FailoverView): void {
    this.failovers.push(f);
    if (this.failovers.length > MAX_FAILOVERS) this.failovers.splice(0, this.failovers.length - MAX_FAILOVERS);
  }
}
