// One node of a Baton cluster: the runner that wires its parts and runs its timers. Its phase
// (discovering → syncing → standby ⇄ promoting → active → handing-off) and what it knows of its
// peers are plain state (node-state.ts); the failover rules are pure functions of that state
// (lib/cluster: role-decider, freeze-rule, misconfig-rule, split-brain-rule, grant-reconfirm);
// cluster-decisions.ts runs them on a timer and peer-message-handler.ts on each message, and
// the role changes they call for are in cluster-transitions.ts. Each of those takes a narrow
// context interface, which this class satisfies: none of them imports this file.
import type { Logger } from 'pino';
import type { ClusterOptions, PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { FailoverCause, NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ReceivedPeerMessage, StatusMessage } from '../../lib/cluster/peer-messages.ts';
import { defaultReturnHoldDownMs } from '../../lib/cluster/priority-return.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { AuditReplication } from './audit-replication.ts';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import type { ReservingTokenSource } from '../../lib/tokens/token-source.ts';
import type { ClusterBackend } from '../admin-ops/cluster-backend.ts';
import type { AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import { HOLD, type Route, sameRoute } from '../lines/routing.ts';
import { type AdminContext, ClusterAdmin } from './cluster-admin.ts';
import { type DecisionContext, decide, noticeFreeze } from './cluster-decisions.ts';
import { type HandoffCause, type HandoffResult, handoff, requestSync, takeOver } from './cluster-transitions.ts';
import { clusterView, type ViewContext } from './cluster-view.ts';
import { FailoverTimeline } from './failover-timeline.ts';
import { LoopDelayWatch } from './loop-delay.ts';
import type { StoredCeilings, ClientRouting, EngineDriver, LocalAdmin, NodeClock } from './node-deps.ts';
import { NodeState } from './node-state.ts';
import { handlePeerMessage, type MessageContext } from './peer-message-handler.ts';
import { type MeshPeer, PeerMesh } from './peer-mesh.ts';
import { PeerWatch } from './peer-watch.ts';
import { ReplicationSink } from './replication-sink.ts';
import { ReplicationSource } from './replication-source.ts';
import { RoleLease } from './role-lease.ts';
import { TokenCeilings } from './token-ceilings.ts';
import { TokenSlotCheck } from './token-slot-check.ts';
import type { EtcdCoordination } from '../coordination/etcd-coordination.ts';
import { type EtcdRoleContext, mayCampaign, onHolderEvent } from './cluster-etcd-role.ts';

export const DECIDE_EVERY_MS = 25;
/** At a stop, how long a promotion or handoff already under way may take before the stop decides (the service unit's stop timeout counts it). */
export const SHUTDOWN_TRANSITION_WAIT_MS = 5_000;

/** What a cluster node needs from its daemon, grouped by concern (node-deps.ts). */
export interface ClusterNodeDeps {
  cluster: ClusterOptions;
  instanceId: string;
  /** Authenticates the peer links (peer-mesh.ts). */
  adminToken: string;
  engine: LockEngine;
  tokens: ReservingTokenSource;
  driver: EngineDriver;
  clock: NodeClock;
  clients: ClientRouting;
  ceilingStore: StoredCeilings;
  localAdmin: LocalAdmin;
  logger: Logger;
  /**
   * The etcd mode (`--coordination etcd`): the role comes from etcd (cluster-etcd-role.ts). Absent
   * in the peers mode, which then runs exactly as before.
   */
  coordination?: EtcdCoordination;
  /**
   * Told of every change of this node's role ('active' just before a promoted node serves, 'standby'
   * when it stops serving: it follows another node or steps out): the seam for etcd-gate's reply
   * gate (activate/deactivate). Absent: nothing is called.
   */
  onRoleChange?: (role: NodeRole) => void;
}

export class ClusterNode implements ClusterBackend, DecisionContext, MessageContext, AdminContext, ViewContext {
  readonly state = new NodeState();
  readonly self: PeerConfig;
  readonly priority: number;
  readonly instanceId: string;
  readonly peerTimeoutMs: number;
  readonly heartbeatMs: number;
  readonly returnHoldDownMs: number;
  /** Every configured node, in priority order. */
  readonly peers: readonly PeerConfig[];
  readonly engine: LockEngine;
  readonly tokens: ReservingTokenSource;
  readonly driver: EngineDriver;
  readonly clock: NodeClock;
  readonly clients: ClientRouting;
  readonly ceilingStore: StoredCeilings;
  readonly localAdmin: LocalAdmin;
  readonly logger: Logger;
  readonly mesh: PeerMesh;
  readonly source: ReplicationSource;
  readonly sink: ReplicationSink;
  readonly ceilings: TokenCeilings;
  readonly slotCheck: TokenSlotCheck;
  readonly timeline: FailoverTimeline;
  readonly watch: PeerWatch;
  readonly admin: ClusterAdmin;
  /** The cluster-wide audit: this node's entries to its peers, theirs to it. */
  readonly auditReplication: AuditReplication;
  /** How long this node may grant (the engine's grant window): see role-lease.ts. */
  readonly lease: RoleLease;
  /** This process's event-loop delays (shown in the cluster view). */
  readonly loopDelay = new LoopDelayWatch();
  /** The etcd mode's coordination; null in the peers mode. */
  readonly coordination: EtcdCoordination | null;
  private readonly onRoleChange: ((role: NodeRole) => void) | null;
  private lastRole: NodeRole = 'standby';
  private timers: NodeJS.Timeout[] = [];
  private route: Route | null = null;

  constructor(d: ClusterNodeDeps) {
    const { config, nodeId, peerTimeoutMs } = d.cluster;
    this.priority = config.peers.findIndex((p) => p.id === nodeId);
    const self = config.peers[this.priority];
    // serve-command.ts takes the node id from the config's own peer list.
    if (self === undefined) throw new RangeError(`node id ${nodeId} is not one of the cluster's peers`);
    this.self = self;
    this.peers = config.peers;
    this.instanceId = d.instanceId;
    this.peerTimeoutMs = peerTimeoutMs;
    this.heartbeatMs = Math.max(20, Math.min(250, Math.floor(peerTimeoutMs / 5)));
    this.returnHoldDownMs = d.cluster.returnHoldDownMs ?? defaultReturnHoldDownMs(peerTimeoutMs);
    this.engine = d.engine;
    this.tokens = d.tokens;
    this.driver = d.driver;
    this.clock = d.clock;
    this.clients = d.clients;
    this.ceilingStore = d.ceilingStore;
    this.localAdmin = d.localAdmin;
    this.logger = d.logger;
    this.lease = new RoleLease(peerTimeoutMs, d.clock.now());
    this.sink = new ReplicationSink(d.engine);
    this.ceilings = new TokenCeilings({ tokens: d.tokens, store: d.ceilingStore, sink: this.sink, now: () => d.clock.now(), logger: d.logger });
    this.slotCheck = new TokenSlotCheck(() => d.clock.now(), d.logger);
    this.source = new ReplicationSource({
      engine: d.engine,
      clock: d.clock,
      instanceId: d.instanceId,
      ackTimeoutMs: peerTimeoutMs,
      ceiling: () => this.ceilings.known(),
      failovers: () => [...this.timeline.entries()],
      onStreamDropped: (id, reason) => d.logger.warn({ peer: id, reason }, 'replication stream dropped'),
      onSnapshotSent: (id, sent) => d.logger.info({ peer: id, ...sent }, 'snapshot streamed to a standby'),
    });
    this.timeline = new FailoverTimeline({
      broadcast: (f) => this.source.broadcastFailover(f),
      logger: d.logger,
      now: () => d.clock.now(),
      wallNow: () => d.clock.wallNow(),
      subscribe: (listener) => d.engine.subscribe(listener),
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
    const source = this.source;
    this.watch = new PeerWatch({
      self,
      peers: config.peers,
      state: this.state,
      mesh: this.mesh.peers,
      streaming: (id) => source.streaming(id),
      clock: d.clock,
      peerTimeoutMs,
    });
    this.admin = new ClusterAdmin(this);
    this.auditReplication = new AuditReplication(nodeId, this.mesh);
    this.coordination = d.coordination ?? null;
    this.onRoleChange = d.onRoleChange ?? null;
    if (this.coordination !== null) {
      const node = this as EtcdRoleContext;
      this.coordination.bind({ mayCampaign: (inSync) => mayCampaign(node, inSync), onHolderEvent: (event) => onHolderEvent(node, event) });
    }
  }

  /** Applies a listener route when it differs from the one in force. */
  setRoute(route: Route): void {
    const r = this.route;
    if (r !== null && sameRoute(r, route)) return;
    this.route = route;
    this.clients.setRoute(route);
  }

  async start(): Promise<void> {
    const st = this.state;
    this.ceilings.start();
    this.driver.pause();
    this.setRoute(HOLD);
    await this.mesh.start();
    // Discovery counts from when the peer port is open, not from construction, and lasts long
    // enough for a peer's dial in flight to time out and reach us (connect timeout + re-dial).
    st.discoverUntil = this.clock.now() + this.peerTimeoutMs * 1.5;
    st.lastDecideAt = this.clock.now();
    this.lease.reset(st.lastDecideAt);
    // The etcd mode: nothing is granted before the holder's permission says so.
    this.engine.setGrantWindow(this.coordination === null ? this.lease.until : Number.NEGATIVE_INFINITY);
    this.timers.push(setInterval(() => this.heartbeat(), this.heartbeatMs));
    this.timers.push(setInterval(() => this.decide(), DECIDE_EVERY_MS));
    this.loopDelay.start();
    this.coordination?.start();
    this.logger.info(
      { node: this.self.id, priority: this.priority, peerTimeoutMs: this.peerTimeoutMs, returnHoldDownMs: this.returnHoldDownMs },
      'cluster node started: discovering peers',
    );
  }

  view(): ClusterView {
    return clusterView(this, this.clock.now(), this.clock.wallNow());
  }

  role(): NodeRole {
    return this.state.role();
  }

  run(op: AdminOp, who: string): Promise<AdminResult> {
    return this.admin.run(op, who);
  }

  // --- shutdown ---

  /** SIGTERM/SIGINT of the active: hand off to the best standby first (bounded), then the daemon drains. */
  async beforeShutdown(): Promise<void> {
    const st = this.state;
    st.leaving = true;
    this.sendStatus();
    // A promotion or a handoff under way finishes first (each is bounded), then it is decided.
    for (let waited = 0; (st.phase === 'promoting' || st.phase === 'handing-off') && waited < SHUTDOWN_TRANSITION_WAIT_MS; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (st.phase === 'active') {
      const to = this.watch.handoffTargets()[0];
      if (to !== undefined) await this.handoff(to, 'signal');
    }
  }

  async stop(): Promise<void> {
    // Read before anything stops: which standbys are alive, synced and staying.
    const quietMs = this.cleanStopQuietMs();
    this.state.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.loopDelay.stop();
    this.source.stop();
    await this.mesh.stop();
    if (quietMs !== null) await this.coordination?.stopClean(quietMs);
    await this.coordination?.stop();
  }

  /**
   * The etcd mode's clean stop (docs/cluster.md "Stopping the whole cluster"): null unless this
   * node still holds the role key at shutdown (no handoff took it) and no member of the stored
   * in-sync set is alive, synced and staying (such a member takes the role with everything, as
   * after a crash); else how long its longest lease still runs (ms, 0 when none does). The
   * protocols have drained: nothing more is answered, so no lease is granted after this reading.
   */
  private cleanStopQuietMs(): number | null {
    const holder = this.coordination?.holder;
    if (holder === undefined || !holder.holding) return null;
    const staying = this.watch.handoffTargets();
    if (staying.some((id) => holder.inSync?.has(id) === true)) return null;
    return Math.max(0, this.engine.latestLeaseEnd() - this.clock.now());
  }

  // --- peer messages ---

  /** Before anything that may run ahead of the decision timer when the process wakes: see noticeFreeze. */
  private wake(): void {
    if (this.timers.length > 0 && !this.state.stopped) noticeFreeze(this);
  }

  private onLinkUp(peer: MeshPeer): void {
    const st = this.state;
    this.wake();
    // Debug: a refused or flapping link would fill the log (refusals are logged as errors, rate-limited).
    this.logger.debug({ peer: peer.config.id, instance: peer.link?.peerInstance }, 'peer link up');
    // A restarted peer is a new process: what its previous run said (say, that it was active) no longer holds.
    if (st.statuses.get(peer.config.id)?.instance !== peer.link?.peerInstance) st.statuses.delete(peer.config.id);
    this.sendStatusTo(peer);
    this.auditReplication.linkUp(peer);
    // Back in touch with the active we follow: the stream was cut, so start over from a snapshot.
    if (st.following === peer.config.id && st.phase !== 'active') requestSync(this, peer);
  }

  private onLinkDown(peer: MeshPeer, reason: string): void {
    const st = this.state;
    // Worth an info line when the peer was heard for a while; a link that never got going is debug.
    const level = this.clock.now() - peer.lastSeen < this.peerTimeoutMs && st.statuses.has(peer.config.id) ? 'info' : 'debug';
    this.logger[level]({ peer: peer.config.id, reason }, 'peer link down');
    // Do not send clients to a node this one just lost touch with (it may have died): hold them.
    if (st.following === peer.config.id && (st.phase === 'standby' || st.phase === 'syncing')) this.setRoute(HOLD);
    this.source.removeStandby(peer.config.id);
    this.sink.dropSnapshot(peer.config.id);
    this.admin.forwarder.onLinkDown(peer.config.id);
    if (st.handoffWaiter?.peer === peer.config.id) st.handoffWaiter.resolve(false);
  }

  private onMessage(peer: MeshPeer, m: ReceivedPeerMessage): void {
    this.wake();
    handlePeerMessage(this, peer, m);
  }

  // --- status and decisions ---

  private statusMessage(): StatusMessage {
    const st = this.state;
    const active = st.role() === 'active';
    const known = this.ceilings.known();
    return {
      t: 'status',
      id: this.self.id,
      instance: this.instanceId,
      phase: st.phase,
      active: this.watch.activeId(),
      syncedWith: active ? this.instanceId : st.syncedWith,
      yielded: st.yielded,
      leaving: st.leaving,
      fresh: active && st.fresh,
      partial: st.partialHold !== null,
      ceiling: (active ? known : this.ceilings.foreign).toString(),
      known: known.toString(),
      slot: this.priority,
      ...(active ? { lags: this.source.lags() } : {}),
    };
  }

  sendStatus(): void {
    this.wake();
    if (!this.state.stopped) this.mesh.broadcast(this.statusMessage());
  }

  /**
   * The heartbeat timer: a status to every peer, then the grant window moves on from it. A
   * lapsed active has stepped out in sendStatus (noticeFreeze) before this moves anything.
   */
  private heartbeat(): void {
    this.sendStatus();
    if (this.state.stopped) return;
    // The claims' fates since the last beat, to every node (failover-timeline.ts).
    this.timeline.flush();
    // The etcd mode: the grant window is the holder's permission (cluster-etcd-role.ts), not the heartbeats'.
    if (this.coordination !== null) return;
    this.lease.beat(this.clock.now());
    // While the peers are asked to confirm this node after a lapse, the window stays shut.
    if (this.state.reconfirmSince === null) this.engine.setGrantWindow(this.lease.until);
  }

  private sendStatusTo(peer: MeshPeer): void {
    this.wake();
    this.mesh.send(peer, this.statusMessage());
  }

  private decide(): void {
    if (!this.state.stopped) decide(this);
  }

  roleChanged(role: NodeRole): void {
    if (this.onRoleChange === null || role === this.lastRole) return;
    this.lastRole = role;
    this.onRoleChange(role);
  }

  // --- transitions (cluster-transitions.ts), as the admin and the message handler start them ---

  takeOver(peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause, lost = 0): Promise<void> {
    return takeOver(this, peer, seq, pausedMs, cause, lost);
  }

  handoff(to: string, cause: HandoffCause): Promise<HandoffResult | null> {
    return handoff(this, to, cause);
  }
}
