// One node of a Baton cluster: its phase (discovering → syncing → standby ⇄ promoting → active
// → handing-off), the transitions between them, and what each means for the lock listeners
// (serve, redirect to the active, or hold), the engine (a mirror on a standby, live on the
// active) and the token sequence. Who should be active is decided by lib/cluster/role-decider.ts
// from the peers' status heartbeats; this file carries decisions out.
import type { Logger } from 'pino';
import type { ClusterOptions, PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { PeerMessage, StatusMessage } from '../../lib/cluster/peer-messages.ts';
import { decideRole, type PeerState } from '../../lib/cluster/role-decider.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { BlockTokenSource } from '../../lib/tokens/token-source.ts';
import type { ClusterView, FailoverCause, FailoverView, NodePhase, NodeRole } from '../../lib/ops/api-types.ts';
import type { AdminOp, AdminResult } from '../daemon-facade.ts';
import { HOLD, type Route } from '../routing.ts';
import { formatAddress } from '../../lib/client/address.ts';
import { AdminForwarder, readAdminOp, unavailable } from './admin-forwarder.ts';
import { type MeshPeer, PeerMesh } from './peer-mesh.ts';
import { ReplicationSink } from './replication-sink.ts';
import { ReplicationSource } from './replication-source.ts';
import * as transitions from './cluster-transitions.ts';
import { clusterView } from './cluster-view.ts';
import type { ClusterBackend } from '../ops/cluster-backend.ts';

const DECIDE_EVERY_MS = 25;
const HANDOFF_TIMEOUT_MS = 2_000;
const SYNC_RETRY_MS = 500;
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

export function redirectRoute(p: PeerConfig): Route {
  return {
    kind: 'redirect',
    lock: formatAddress({ host: p.host, port: p.lockPort }),
    session: formatAddress({ host: p.host, port: p.sessionPort }),
  };
}

export class ClusterNode implements ClusterBackend {
  phase: NodePhase = 'discovering';
  yielded = false;
  /** Shutting down: hands off and never takes the active role again. */
  leaving = false;
  /** The peer this node takes as active (null when none is known, or when it is active itself). */
  following: string | null = null;
  /** Instance of the active whose state this node's mirror holds. */
  syncedWith: string | null = null;
  lastActiveInstance: string | null = null;
  readonly failovers: FailoverView[] = [];
  readonly mesh: PeerMesh;
  readonly source: ReplicationSource;
  readonly sink: ReplicationSink;
  readonly self: PeerConfig;
  readonly priority: number;
  readonly statuses = new Map<string, StatusMessage>();
  private readonly forwarder = new AdminForwarder();
  /** Until then, the node only listens (start-up, and after this process was frozen). */
  private discoverUntil: number;
  private lastDecideAt: number;
  private readonly hbMs: number;
  private timers: NodeJS.Timeout[] = [];
  private handoffWaiter: { peer: string; resolve(ok: boolean): void } | null = null;
  /** Lower-priority peers seen active at the same time as this node (split brain), by id. */
  private readonly rivals = new Set<string>();
  private stopped = false;
  private route: Route | null = null;
  /** Highest ceiling a peer has reported, and the highest one the active sent this node. */
  private peerCeiling = 0n;
  seenCeiling = 0n;

  constructor(private readonly d: ClusterNodeDeps) {
    const { config, nodeId, peerTimeoutMs } = d.cluster;
    this.priority = config.peers.findIndex((p) => p.id === nodeId);
    this.self = config.peers[this.priority] as PeerConfig;
    // Both are set again at start(): the console may take seconds to prepare in between.
    this.discoverUntil = d.clock.now() + peerTimeoutMs;
    this.lastDecideAt = d.clock.now();
    this.hbMs = Math.max(20, Math.min(250, Math.floor(peerTimeoutMs / 5)));
    this.sink = new ReplicationSink(d.engine);
    this.source = new ReplicationSource({
      engine: d.engine, clock: d.clock, instanceId: d.instanceId, ackTimeoutMs: peerTimeoutMs,
      ceiling: () => this.knownCeiling(), failovers: () => this.failovers,
      onStreamDropped: (id, reason) => d.logger.warn({ peer: id, reason }, 'replication stream dropped'),
    });
    const listen = d.cluster.peerListen ?? { host: this.self.host, port: this.self.peerPort };
    this.mesh = new PeerMesh({
      selfId: nodeId, selfInstance: d.instanceId, peers: config.peers, listen, adminToken: d.adminToken,
      now: () => d.clock.now(), logger: d.logger,
      onMessage: (peer, m) => this.onMessage(peer, m),
      onLinkUp: (peer) => this.onLinkUp(peer),
      onLinkDown: (peer, reason) => this.onLinkDown(peer, reason),
    });
  }

  /** Applies a listener route when it differs from the one in force. */
  setRoute(route: Route): void {
    const r = this.route;
    if (r !== null && r.kind === route.kind && (r.kind !== 'redirect' || (route.kind === 'redirect' && r.lock === route.lock && r.session === route.session))) return;
    this.route = route;
    this.d.setRoute(route);
  }

  async start(): Promise<void> {
    this.d.driver.pause();
    this.setRoute(HOLD);
    await this.mesh.start();
    // Discovery counts from when the peer port is open, not from construction.
    this.discoverUntil = this.d.clock.now() + this.d.cluster.peerTimeoutMs;
    this.lastDecideAt = this.d.clock.now();
    this.timers.push(setInterval(() => this.sendStatus(), this.hbMs));
    this.timers.push(setInterval(() => this.decide(), DECIDE_EVERY_MS));
    this.d.logger.info({ node: this.self.id, priority: this.priority, peerTimeoutMs: this.d.cluster.peerTimeoutMs }, 'cluster node started: discovering peers');
  }

  get instanceId(): string {
    return this.d.instanceId;
  }

  peersInOrder(): readonly PeerConfig[] {
    return this.d.cluster.config.peers;
  }

  view(): ClusterView {
    return clusterView(this, this.d.clock.now(), this.d.wallNow());
  }

  role(): NodeRole {
    return this.phase === 'active' || this.phase === 'handing-off' ? 'active' : 'standby';
  }

  /** The peer id of the active node as this node knows it. */
  activeId(): string | null {
    if (this.role() === 'active') return this.self.id;
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
    return c;
  }

  /** Every ceiling this node has heard of, its peers' included: a promotion starts above it. */
  promotionFloor(): bigint {
    const c = this.knownCeiling();
    return this.peerCeiling > c ? this.peerCeiling : c;
  }

  // --- admin ---

  async run(op: AdminOp, who: string): Promise<AdminResult> {
    if (op.op === 'restore') return this.restore(op.node);
    if (this.role() === 'active') {
      if (op.op === 'handoff') return this.apiHandoff(op.target);
      return this.runLocal(op);
    }
    const active = this.activeId();
    const peer = active === null ? undefined : this.mesh.peers.get(active);
    if (peer === undefined) return unavailable('no active node is known right now (an election or a handoff is under way); try again in a moment');
    return this.forwarder.forward(peer, op, `${who} via ${this.self.id}`);
  }

  private runLocal(op: AdminOp & { op: 'force-release' | 'kick' }): AdminResult {
    if (this.phase !== 'active') return unavailable(`node ${this.self.id} is ${this.phase}; try again in a moment`);
    return this.d.runLocally(op);
  }

  private async apiHandoff(target: string | null): Promise<AdminResult> {
    const targets = this.handoffTargets();
    if (target !== null && !this.d.cluster.config.peers.some((p) => p.id === target)) return { ok: false, error: 'not-found', detail: `no node ${target} in the cluster` };
    if (target === this.self.id) return { ok: false, error: 'conflict', detail: `${target} is already the active node` };
    const to = target ?? targets[0] ?? null;
    if (to === null || !targets.includes(to)) {
      return { ok: false, error: 'conflict', detail: to === null ? 'no standby is alive and in sync to hand off to' : `${to} is not alive and in sync: it cannot take over now` };
    }
    const gap = await this.handoff(to, 'api-handoff');
    if (gap === null) return { ok: false, error: 'conflict', detail: `${to} did not take over in time; ${this.self.id} stays active` };
    return { ok: true, body: { handoff: { from: this.self.id, target: to, gapMs: gap } }, detail: `to ${to}, gap ${gap.toFixed(1)} ms` };
  }

  private restore(node: string | null): AdminResult {
    if (node !== null && !this.d.cluster.config.peers.some((p) => p.id === node)) return { ok: false, error: 'not-found', detail: `no node ${node} in the cluster` };
    const yielded = this.yieldedNodes();
    const targets = node === null ? yielded : yielded.filter((id) => id === node);
    if (targets.length === 0) return { ok: false, error: 'conflict', detail: node === null ? 'no node has yielded: nothing to restore' : `${node} has not yielded: nothing to restore` };
    for (const id of targets) {
      if (id === this.self.id) this.yielded = false;
      else {
        const peer = this.mesh.peers.get(id);
        if (peer !== undefined) this.mesh.send(peer, { t: 'restore' });
      }
    }
    this.sendStatus();
    return { ok: true, body: { restored: targets }, detail: targets.join(', ') };
  }

  yieldedNodes(): string[] {
    const out: string[] = [];
    for (const p of this.d.cluster.config.peers) {
      if (p.id === this.self.id) {
        if (this.yielded) out.push(p.id);
      } else if (this.isAlive(p.id) && this.statuses.get(p.id)?.yielded === true) out.push(p.id);
    }
    return out;
  }

  // --- shutdown ---

  /** SIGTERM/SIGINT of the active: hand off to the best standby first (bounded), then the daemon drains. */
  async beforeShutdown(): Promise<void> {
    this.leaving = true;
    this.sendStatus();
    if (this.phase === 'active') {
      const to = this.handoffTargets()[0];
      if (to !== undefined) await this.handoff(to, 'signal');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.source.stop();
    await this.mesh.stop();
  }

  // --- peer messages ---

  private onLinkUp(peer: MeshPeer): void {
    this.d.logger.info({ peer: peer.config.id, instance: peer.link?.peerInstance }, 'peer link up');
    // A restarted peer is a new process: what its previous run said (say, that it was active) no longer holds.
    if (this.statuses.get(peer.config.id)?.instance !== peer.link?.peerInstance) this.statuses.delete(peer.config.id);
    this.sendStatusTo(peer);
    // Back in touch with the active we follow: the stream was cut, so start over from a snapshot.
    if (this.following === peer.config.id && this.phase !== 'active') this.requestSync(peer);
  }

  private onLinkDown(peer: MeshPeer, reason: string): void {
    this.d.logger.info({ peer: peer.config.id, reason }, 'peer link down');
    this.source.removeStandby(peer.config.id);
    this.forwarder.onLinkDown(peer.config.id);
    if (this.handoffWaiter?.peer === peer.config.id) this.handoffWaiter.resolve(false);
  }

  private onMessage(peer: MeshPeer, m: PeerMessage): void {
    const id = peer.config.id;
    switch (m.t) {
      case 'status': {
        this.statuses.set(id, m);
        if (this.phase === 'active') this.noteRival(peer, m);
        const c = BigInt(m.ceiling);
        if (c > this.peerCeiling) this.peerCeiling = c;
        // Two actives (a healed partition): each goes on above what the other may have issued.
        if (m.phase === 'active' && this.phase === 'active' && c > this.d.tokens.reservedCeiling) this.d.tokens.raiseFloor(c);
        return;
      }
      case 'sync':
        if (this.phase === 'active' && peer.link !== null) this.source.addStandby(id, peer.link);
        return;
      case 'snapshot':
        if (this.following !== id) return;
        this.sink.applySnapshot(m);
        this.failovers.splice(0, this.failovers.length, ...this.sink.failovers);
        this.syncedWith = m.instance;
        this.lastActiveInstance = m.instance;
        this.d.tokens.raiseFloor(this.knownCeiling());
        if (this.phase === 'syncing') this.phase = 'standby';
        this.d.logger.info({ active: id, locks: m.holders.length, waiters: m.waiters.length, seq: m.seq }, 'synced from the active node');
        this.mesh.send(peer, { t: 'ack', seq: m.seq });
        this.sendStatus();
        return;
      case 'ev':
        if (this.following !== id || this.syncedWith === null) return;
        try {
          this.sink.applyBatch(m.seq, m.e);
        } catch (err) {
          this.d.logger.error({ err, peer: id }, 'replication stream unreadable: re-syncing');
          this.requestSync(peer);
          return;
        }
        this.mesh.send(peer, { t: 'ack', seq: m.seq });
        return;
      case 'ack':
        this.source.onAck(id, m.seq);
        return;
      case 'ceil': {
        const c = BigInt(m.ceiling);
        if (c > this.seenCeiling) this.seenCeiling = c;
        this.d.persistCeiling(c).then(
          () => this.mesh.send(peer, { t: 'ceil-ack', ceiling: m.ceiling }),
          (err: unknown) => this.d.logger.error({ err }, 'could not store a token ceiling from the active node'),
        );
        return;
      }
      case 'ceil-ack':
        this.source.onCeilingAck(id, BigInt(m.ceiling));
        return;
      case 'failover':
        this.addFailover(m.f);
        return;
      case 'handoff':
        void this.takeOver(peer, m.seq, m.pausedMs, m.cause);
        return;
      case 'promoted':
        if (this.handoffWaiter?.peer === id) this.handoffWaiter.resolve(true);
        return;
      case 'admin':
        void this.serveAdmin(peer, m.req, m.who, m.op);
        return;
      case 'admin-result':
        this.forwarder.onResult(m.req, m.result);
        return;
      case 'restore':
        if (this.yielded) {
          this.yielded = false;
          this.d.logger.info({ by: id }, 'restored: this node may take the active role back by priority');
          this.sendStatus();
        }
        return;
      case 'hello':
        return;
    }
  }

  private async serveAdmin(peer: MeshPeer, req: number, who: string, raw: unknown): Promise<void> {
    const op = readAdminOp(raw);
    let result: AdminResult;
    if (op === null) result = { ok: false, error: 'invalid-input', detail: 'unreadable admin operation' };
    else if (this.role() !== 'active') result = unavailable(`${this.self.id} is no longer the active node`);
    else {
      result = await this.run(op, who);
      this.d.audit(who, op, result);
    }
    this.mesh.send(peer, { t: 'admin-result', req, result });
  }

  // --- status and decisions ---

  private statusMessage(): StatusMessage {
    const active = this.role() === 'active';
    return {
      t: 'status', id: this.self.id, instance: this.d.instanceId, phase: this.phase,
      active: active ? this.self.id : this.following, syncedWith: active ? this.d.instanceId : this.syncedWith,
      yielded: this.yielded, leaving: this.leaving, ceiling: this.knownCeiling().toString(), ...(active ? { lags: this.source.lags() } : {}),
    };
  }

  sendStatus(): void {
    if (!this.stopped) this.mesh.broadcast(this.statusMessage());
  }

  private sendStatusTo(peer: MeshPeer): void {
    this.mesh.send(peer, this.statusMessage());
  }

  private alivePeers(): PeerState[] {
    const out: PeerState[] = [];
    const lags = this.phase === 'active' ? this.source.lags() : {};
    for (const peer of this.mesh.peers.values()) {
      const s = this.statuses.get(peer.config.id);
      if (s === undefined || !this.isAlive(peer.config.id)) continue;
      out.push({ id: s.id, priority: peer.priority, instance: s.instance, phase: s.phase, syncedWith: s.syncedWith, yielded: s.yielded, leaving: s.leaving === true, lagEvents: lags[s.id]?.events ?? null });
    }
    return out;
  }

  private decide(): void {
    if (this.stopped) return;
    const now = this.d.clock.now();
    if (now - this.lastDecideAt > this.d.cluster.peerTimeoutMs) this.afterFreeze(now - this.lastDecideAt);
    this.lastDecideAt = now;
    const alive = this.alivePeers();
    // A sync request can go unanswered (sent while that node was still promoting): ask again.
    if (this.phase === 'syncing' && this.following !== null && now - this.syncRequestedAt > SYNC_RETRY_MS) {
      const f = this.mesh.peers.get(this.following);
      if (f !== undefined && f.link !== null) this.requestSync(f);
    }
    // Clients go to the active we follow while we are in touch with it; when its link is down
    // or it went silent, they are held here until the cluster settles (not sent to a dead node).
    if (this.phase === 'syncing' || this.phase === 'standby') {
      const f = this.following === null ? undefined : this.mesh.peers.get(this.following);
      this.setRoute(f !== undefined && f.link !== null && this.isAlive(f.config.id) ? redirectRoute(f.config) : HOLD);
    }
    const decision = decideRole(
      {
        priority: this.priority, instance: this.d.instanceId, phase: this.phase, syncedWith: this.syncedWith, yielded: this.yielded,
        following: this.following !== null && this.isAlive(this.following) ? this.following : null,
        lastActiveInstance: this.lastActiveInstance, discovering: now < this.discoverUntil, leaving: this.leaving,
      },
      alive,
    );
    switch (decision.kind) {
      case 'stay':
        return;
      case 'follow':
        this.follow(decision.id);
        return;
      case 'promote':
        void this.promoteAfterLoss();
        return;
      case 'step-down':
        this.d.logger.warn({ to: decision.to }, 'split brain: a higher-priority active node is back; stepping down');
        this.follow(decision.to);
        return;
      case 'handoff':
        void this.handoff(decision.to, 'priority-return');
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
  private afterFreeze(frozenMs: number): void {
    const now = this.d.clock.now();
    this.discoverUntil = now + this.d.cluster.peerTimeoutMs;
    if (this.role() !== 'active') {
      this.d.logger.warn({ frozenMs: Math.round(frozenMs) }, 'this process was frozen longer than the peer timeout: listening to the peers again');
      return;
    }
    this.d.logger.warn({ frozenMs: Math.round(frozenMs) }, 'this process was frozen longer than the peer timeout: stepping out of the active role until the peers are heard');
    this.source.stop();
    this.d.driver.pause();
    this.setRoute(HOLD);
    this.phase = 'discovering';
    this.lastActiveInstance = this.d.instanceId;
    this.sendStatus();
  }

  /**
   * Another node reports itself active while this one is (a healed partition). Recorded when its
   * status arrives, not at the next decision: the other node steps down at once, and its next
   * status would hide that there were two actives.
   */
  private noteRival(peer: MeshPeer, s: StatusMessage): void {
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
  /** Monotonic time of the last sync request. */
  syncRequestedAt = Number.NEGATIVE_INFINITY;
  requestSync(peer: MeshPeer): void {
    this.syncRequestedAt = this.d.clock.now();
    transitions.requestSync(this, peer);
  }
  private promoteAfterLoss(): Promise<void> {
    return transitions.promoteAfterLoss(this, this.d);
  }
  private takeOver(peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause): Promise<void> {
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

  private addFailover(f: FailoverView): void {
    this.failovers.push(f);
    if (this.failovers.length > MAX_FAILOVERS) this.failovers.splice(0, this.failovers.length - MAX_FAILOVERS);
  }
}
