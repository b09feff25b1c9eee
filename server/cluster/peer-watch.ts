// What a node can tell of its peers from their heartbeats: who is alive, who is active as it
// knows it, whom it could hand off to, who has yielded. Read only: it reads the node's state,
// its mesh's last-seen times and its replication streams, and changes nothing.
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { NodeState } from './node-state.ts';
import type { MeshPeer } from './peer-mesh.ts';

export interface PeerWatchDeps {
  self: PeerConfig;
  /** Every configured node, in priority order. */
  peers: readonly PeerConfig[];
  state: Readonly<NodeState>;
  /** The mesh's peers, by id (never this node). */
  mesh: ReadonlyMap<string, MeshPeer>;
  /** Whether the active streams to a standby (ReplicationSource.streaming). */
  streaming(id: string): boolean;
  clock: Clock;
  peerTimeoutMs: number;
}

export class PeerWatch {
  constructor(private readonly d: PeerWatchDeps) {}

  isAlive(id: string): boolean {
    const peer = this.d.mesh.get(id);
    return peer !== undefined && this.d.clock.now() - peer.lastSeen <= this.d.peerTimeoutMs && this.d.state.statuses.has(id);
  }

  /** The peer this node follows, while it hears it; null otherwise. */
  followingAlive(): string | null {
    const f = this.d.state.following;
    return f !== null && this.isAlive(f) ? f : null;
  }

  /** The peer id of the active node as this node knows it. */
  activeId(): string | null {
    return this.d.state.role() === 'active' ? this.d.self.id : this.followingAlive();
  }

  /** Standbys an active could hand off to now: alive, streaming, in priority order. */
  handoffTargets(): string[] {
    if (this.d.state.phase !== 'active') return [];
    return [...this.d.mesh.values()]
      .filter((p) => this.isAlive(p.config.id) && this.d.streaming(p.config.id) && this.d.state.statuses.get(p.config.id)?.leaving !== true)
      .map((p) => p.config.id);
  }

  /** Nodes that gave the active role away by an API handoff, this one included, in priority order. */
  yieldedNodes(): string[] {
    const out: string[] = [];
    for (const p of this.d.peers) {
      if (p.id === this.d.self.id) {
        if (this.d.state.yielded) out.push(p.id);
      } else if (this.isAlive(p.id) && this.d.state.statuses.get(p.id)?.yielded === true) out.push(p.id);
    }
    return out;
  }
}
