// What a cluster node does with each message from a peer. Status heartbeats feed the
// decisions (cluster-decisions.ts) and the split-brain rule (lib/cluster/split-brain-rule.ts);
// replication messages go to the source (active) or the sink (standby); handoff, admin and
// restore messages start their procedures.
import type { Logger } from 'pino';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { FailoverCause } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ReceivedPeerMessage, StatusMessage } from '../../lib/cluster/peer-messages.ts';
import { splitBrainRule } from '../../lib/cluster/split-brain-rule.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { BlockTokenSource } from '../../lib/tokens/token-source.ts';
import type { AuditReplication } from './audit-replication.ts';
import type { ClusterAdmin } from './cluster-admin.ts';
import type { FailoverTimeline } from './failover-timeline.ts';
import type { StoredCeilings, NodeClock } from './node-deps.ts';
import type { NodeState } from './node-state.ts';
import { requestSync } from './cluster-transitions.ts';
import type { MeshPeer, PeerMesh } from './peer-mesh.ts';
import type { ReplicationSink } from './replication-sink.ts';
import type { ReplicationSource } from './replication-source.ts';
import type { TokenCeilings } from './token-ceilings.ts';
import type { TokenSlotCheck } from './token-slot-check.ts';

/** What the message handler reads and drives. */
export interface MessageContext {
  readonly self: PeerConfig;
  /** This node's priority (0 = highest). */
  readonly priority: number;
  readonly state: NodeState;
  readonly engine: Pick<LockEngine, 'lockCount'>;
  readonly tokens: Pick<BlockTokenSource, 'highWater' | 'raiseFloor'>;
  readonly clock: NodeClock;
  readonly logger: Logger;
  readonly ceilingStore: Pick<StoredCeilings, 'persist'>;
  readonly mesh: Pick<PeerMesh, 'send'>;
  readonly source: Pick<ReplicationSource, 'addStandby' | 'onAck' | 'onCeilingAck'>;
  readonly sink: ReplicationSink;
  readonly ceilings: TokenCeilings;
  readonly slotCheck: Pick<TokenSlotCheck, 'check'>;
  readonly timeline: Pick<FailoverTimeline, 'add' | 'replace' | 'record'>;
  readonly admin: Pick<ClusterAdmin, 'serve' | 'forwarder'>;
  readonly auditReplication: Pick<AuditReplication, 'receive'>;
  sendStatus(): void;
  /** The take-over transition (cluster-transitions.ts): this node is the successor of a handoff. */
  takeOver(peer: MeshPeer, seq: number, pausedMs: number, cause: FailoverCause, lost?: number): Promise<void>;
}

export function handlePeerMessage(node: MessageContext, peer: MeshPeer, m: ReceivedPeerMessage): void {
  const id = peer.config.id;
  switch (m.t) {
    case 'status': {
      node.state.statuses.set(id, m);
      node.state.statusAt.set(id, node.clock.now());
      node.slotCheck.check(id, peer.priority, m.slot);
      noteRival(node, peer, m);
      const c = BigInt(m.ceiling);
      const known = m.known === undefined ? c : BigInt(m.known);
      node.ceilings.notePeer(known, id);
      // Obeyed only when at most one reservation above anything this node has seen (ceiling-guard.ts).
      // An active goes on above every range another node may have issued from: a rival active's
      // blocks (a healed partition; equal ceilings can still overlap, so even an equal one
      // counts), or what a standby knew before it followed this node (a node that was down
      // while this one started alone). raiseFloor only ever goes up.
      if (node.state.phase === 'active' && c > node.tokens.highWater && node.ceilings.guard.admit(c, id, 'status')) {
        node.logger.warn(
          { peer: id, ceiling: m.ceiling, was: node.tokens.highWater.toString() },
          'token floor raised above a range another node may have issued from',
        );
        node.tokens.raiseFloor(c);
      }
      return;
    }
    case 'sync':
      if (node.state.phase === 'active' && peer.link !== null) {
        node.source.addStandby(id, peer.link);
        // A standby holds this state now: it is the cluster's, no longer this node's alone.
        node.state.fresh = false;
      }
      return;
    case 'snapshot-begin':
      // Taken only when this node asked this peer for it (a new request starts over).
      if (node.state.following !== id || !node.sink.beginSnapshot(id, m)) return;
      // The table starts over here (a re-sync of a standby that was in sync too): until the end
      // of this snapshot it is not the active's, and this node no candidate to replace it.
      node.state.syncedWith = null;
      if (peer.link !== null) peer.link.assembling = true;
      // The active's history becomes this node's: what the stream sends later is judged against it.
      node.ceilings.guard.adopt(maxOf(BigInt(m.ceiling), BigInt(m.highWater)));
      // The block in use when this standby joined: stored and acknowledged like any later one.
      acceptCeiling(node, peer, m.ceiling);
      return;
    case 'snapshot-part':
      // Applied as it comes, only while the snapshot this node asked this peer for is under way.
      if (node.state.following === id && node.sink.applyPart(id, m)) node.ceilings.guard.adopt(node.sink.maxToken);
      return;
    case 'snapshot': {
      if (peer.link !== null) peer.link.assembling = false;
      if (node.state.following !== id) return;
      // Not the one asked for, or something missing: the decision asks again.
      if (!node.sink.finishSnapshot(id, m)) return;
      node.ceilings.guard.adopt(maxOf(node.sink.maxToken, maxOf(BigInt(m.ceiling), BigInt(m.highWater))));
      acceptCeiling(node, peer, m.ceiling);
      node.timeline.replace(m.failovers);
      node.state.syncedWith = m.instance;
      node.state.lastActiveInstance = m.instance;
      node.tokens.raiseFloor(node.ceilings.known());
      if (node.state.phase === 'syncing') node.state.phase = 'standby';
      node.logger.info({ active: id, locks: node.engine.lockCount, seq: m.seq, parts: m.parts }, 'synced from the active node');
      node.mesh.send(peer, { t: 'ack', seq: m.seq });
      node.sendStatus();
      return;
    }
    case 'ev':
      // Applied from the start of a snapshot (its parts and the events interleave), and after it.
      if (node.state.following !== id || (node.state.syncedWith === null && !node.sink.receiving(id))) return;
      // Not while this node promotes: its table is its own from the handoff message on (the old
      // active changes nothing after it; an expiry there is made here too, on this clock). A
      // holder ended by a late event would leave its lock free with a queue nobody hands on.
      if (node.state.phase === 'promoting') return;
      try {
        // A grant's token above the bound makes the batch unreadable (and the stream re-sync).
        node.sink.applyBatch(m.seq, m.e, node.ceilings.guard.limit());
      } catch (err) {
        node.logger.error({ err, peer: id }, 'replication stream unreadable: re-syncing');
        requestSync(node, peer);
        return;
      }
      // Leaves at the end of this turn, one ack for every batch applied in it (peer-link.ts).
      peer.link?.sendAck(m.seq);
      return;
    case 'renew':
      // Renewals of resumable sessions, on the same link as the stream and in order with it.
      if (node.state.following === id && node.state.syncedWith !== null) node.sink.applyRenewals(m.r);
      return;
    case 'ack':
      node.source.onAck(id, m.seq);
      return;
    case 'ceil':
      acceptCeiling(node, peer, m.ceiling);
      return;
    case 'ceil-ack':
      node.source.onCeilingAck(id, BigInt(m.ceiling));
      return;
    case 'failover':
      node.timeline.add(m.f);
      return;
    case 'handoff':
      void node.takeOver(peer, m.seq, m.pausedMs, m.cause, m.lost ?? 0);
      return;
    case 'handoff-refused':
      if (node.state.handoffWaiter?.peer === id) node.state.handoffWaiter.resolve(false);
      return;
    case 'promoted':
      if (node.state.handoffWaiter?.peer === id) node.state.handoffWaiter.resolve(true, m.failover ?? null);
      return;
    case 'admin':
      void node.admin.serve(peer, m.req, m.who, m.op);
      return;
    case 'admin-result':
      node.admin.forwarder.onResult(m.req, m.result);
      return;
    case 'restore':
      if (node.state.yielded) {
        node.state.yielded = false;
        node.logger.info({ by: id }, 'restored: this node may take the active role back by priority');
        node.sendStatus();
      }
      return;
    case 'audit':
      node.auditReplication.receive(m.entries);
      return;
    case 'hello':
    case 'refused':
      return;
  }
}

/**
 * A status from a peer, while this node is active: a split brain is recorded when the status
 * arrives, not at the next decision (lib/cluster/split-brain-rule.ts says why).
 */
function noteRival(node: MessageContext, peer: MeshPeer, s: StatusMessage): void {
  const st = node.state;
  const decision = splitBrainRule({
    self: { id: node.self.id, priority: node.priority, phase: st.phase },
    peer: { id: s.id, priority: peer.priority, phase: s.phase },
    known: st.rivals.has(s.id),
    wallNow: node.clock.wallNow(),
  });
  if (decision.kind === 'record') {
    st.rivals.add(s.id);
    node.timeline.record(decision.failover);
  } else if (decision.kind === 'forget') st.rivals.delete(s.id);
}

/** Stores a ceiling the active sent and acknowledges it once it is durable here. */
function acceptCeiling(node: MessageContext, peer: MeshPeer, ceiling: string): void {
  const c = BigInt(ceiling);
  // Not stored, not acknowledged: the active cuts this standby off after its ack timeout.
  if (!node.ceilings.guard.admit(c, peer.config.id, 'ceil')) return;
  node.ceilings.noteSeen(c);
  node.ceilingStore.persist(c).then(
    () => node.mesh.send(peer, { t: 'ceil-ack', ceiling }),
    (err: unknown) => node.logger.error({ err }, 'could not store a token ceiling from the active node'),
  );
}

const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);
