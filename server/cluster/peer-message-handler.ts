// What a cluster node does with each message from a peer. Status heartbeats feed the
// decisions (cluster-node.ts); replication messages go to the source (active) or the sink
// (standby); handoff, admin and restore messages start their procedures.
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import type { ClusterNode, ClusterNodeDeps } from './cluster-node.ts';
import type { MeshPeer } from './peer-mesh.ts';

export function handlePeerMessage(node: ClusterNode, d: ClusterNodeDeps, peer: MeshPeer, m: PeerMessage): void {
  const id = peer.config.id;
  switch (m.t) {
    case 'status': {
      node.statuses.set(id, m);
      node.statusAt.set(id, d.clock.now());
      if (node.phase === 'active') node.noteRival(peer, m);
      const c = BigInt(m.ceiling);
      const known = m.known === undefined ? c : BigInt(m.known);
      // Judged when a promotion would use it (ClusterNode.promotionFloor), not here.
      if (known > node.peerCeiling) {
        node.peerCeiling = known;
        node.peerCeilingFrom = id;
      }
      // Obeyed only when at most a block above anything this node has seen (ceiling-guard.ts).
      // An active goes on above every range another node may have issued from: a rival active's
      // blocks (a healed partition; equal ceilings can still overlap, so even an equal one
      // counts), or what a standby knew before it followed this node (a node that was down
      // while this one started alone). raiseFloor only ever goes up.
      if (node.phase === 'active' && c > d.tokens.highWater && node.ceilings.admit(c, id, 'status')) {
        d.logger.warn(
          { peer: id, ceiling: m.ceiling, was: d.tokens.highWater.toString() },
          'token floor raised above a range another node may have issued from',
        );
        d.tokens.raiseFloor(c);
      }
      return;
    }
    case 'sync':
      if (node.phase === 'active' && peer.link !== null) {
        node.source.addStandby(id, peer.link);
        // A standby holds this state now: it is the cluster's, no longer this node's alone.
        node.fresh = false;
      }
      return;
    case 'snapshot-begin':
      // Taken only when this node asked this peer for it (a new request starts over).
      if (node.following !== id || !node.sink.beginSnapshot(id, m)) return;
      if (peer.link !== null) peer.link.assembling = true;
      // The active's history becomes this node's: what the stream sends later is judged against it.
      node.ceilings.adopt(maxOf(BigInt(m.ceiling), BigInt(m.highWater)));
      // The block in use when this standby joined: stored and acknowledged like any later one.
      acceptCeiling(node, d, peer, m.ceiling);
      return;
    case 'snapshot-part':
      // Applied as it comes, only while the snapshot this node asked this peer for is under way.
      if (node.following === id && node.sink.applyPart(id, m)) node.ceilings.adopt(node.sink.maxToken);
      return;
    case 'snapshot': {
      if (peer.link !== null) peer.link.assembling = false;
      if (node.following !== id) return;
      // Not the one asked for, or something missing: the decision asks again.
      if (!node.sink.finishSnapshot(id, m)) return;
      node.ceilings.adopt(maxOf(node.sink.maxToken, maxOf(BigInt(m.ceiling), BigInt(m.highWater))));
      acceptCeiling(node, d, peer, m.ceiling);
      node.failovers.splice(0, node.failovers.length, ...m.failovers);
      node.syncedWith = m.instance;
      node.lastActiveInstance = m.instance;
      d.tokens.raiseFloor(node.knownCeiling());
      if (node.phase === 'syncing') node.phase = 'standby';
      d.logger.info({ active: id, locks: d.engine.lockCount, seq: m.seq, parts: m.parts }, 'synced from the active node');
      node.mesh.send(peer, { t: 'ack', seq: m.seq });
      node.sendStatus();
      return;
    }
    case 'ev':
      // Applied from the start of a snapshot (its parts and the events interleave), and after it.
      if (node.following !== id || (node.syncedWith === null && !node.sink.receiving(id))) return;
      // Not while this node promotes: its table is its own from the handoff message on (the old
      // active changes nothing after it; an expiry there is made here too, on this clock). A
      // holder ended by a late event would leave its lock free with a queue nobody hands on.
      if (node.phase === 'promoting') return;
      try {
        // A grant's token above the bound makes the batch unreadable (and the stream re-sync).
        node.sink.applyBatch(m.seq, m.e, node.ceilings.limit());
      } catch (err) {
        d.logger.error({ err, peer: id }, 'replication stream unreadable: re-syncing');
        node.requestSync(peer);
        return;
      }
      node.mesh.send(peer, { t: 'ack', seq: m.seq });
      return;
    case 'renew':
      // Renewals of resumable sessions, on the same link as the stream and in order with it.
      if (node.following === id && node.syncedWith !== null) node.sink.applyRenewals(m.r);
      return;
    case 'ack':
      node.source.onAck(id, m.seq);
      return;
    case 'ceil':
      acceptCeiling(node, d, peer, m.ceiling);
      return;
    case 'ceil-ack':
      node.source.onCeilingAck(id, BigInt(m.ceiling));
      return;
    case 'failover':
      node.addFailover(m.f);
      return;
    case 'handoff':
      void node.takeOver(peer, m.seq, m.pausedMs, m.cause);
      return;
    case 'handoff-refused':
      if (node.handoffWaiter?.peer === id) node.handoffWaiter.resolve(false);
      return;
    case 'promoted':
      if (node.handoffWaiter?.peer === id) node.handoffWaiter.resolve(true);
      return;
    case 'admin':
      void node.admin.serve(peer, m.req, m.who, m.op);
      return;
    case 'admin-result':
      node.admin.forwarder.onResult(m.req, m.result);
      return;
    case 'restore':
      if (node.yielded) {
        node.yielded = false;
        d.logger.info({ by: id }, 'restored: this node may take the active role back by priority');
        node.sendStatus();
      }
      return;
    case 'hello':
    case 'refused':
      return;
  }
}

/** Stores a ceiling the active sent and acknowledges it once it is durable here. */
function acceptCeiling(node: ClusterNode, d: ClusterNodeDeps, peer: MeshPeer, ceiling: string): void {
  const c = BigInt(ceiling);
  // Not stored, not acknowledged: the active cuts this standby off after its ack timeout.
  if (!node.ceilings.admit(c, peer.config.id, 'ceil')) return;
  if (c > node.seenCeiling) node.seenCeiling = c;
  d.persistCeiling(c).then(
    () => node.mesh.send(peer, { t: 'ceil-ack', ceiling }),
    (err: unknown) => d.logger.error({ err }, 'could not store a token ceiling from the active node'),
  );
}

const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);
