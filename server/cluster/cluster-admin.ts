// The admin operations of a cluster node: run on the active node (force-release and kick on
// its engine, handoff to a standby), forwarded to it by a standby, and restore, which goes
// straight to the yielded node it names. Results are plain data so they can cross the peer link.
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import type { AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import type { ReadAdminOp } from '../../lib/ops-api/admin-request.ts';
import { AdminForwarder, unavailable } from './admin-forwarder.ts';
import type { HandoffCause, HandoffResult } from './cluster-transitions.ts';
import type { LocalAdmin } from './node-deps.ts';
import type { NodeState } from './node-state.ts';
import type { MeshPeer } from './peer-mesh.ts';
import type { PeerWatch } from './peer-watch.ts';

/** What the admin operations use of the node. */
export interface AdminContext {
  readonly self: PeerConfig;
  /** Every configured node, in priority order. */
  readonly peers: readonly PeerConfig[];
  /** Read, and `yielded` cleared by a restore of this node. */
  readonly state: Pick<NodeState, 'phase' | 'yielded' | 'role'>;
  readonly watch: Pick<PeerWatch, 'activeId' | 'handoffTargets' | 'yieldedNodes'>;
  readonly mesh: { readonly peers: ReadonlyMap<string, MeshPeer>; send(peer: MeshPeer, m: PeerMessage): void };
  readonly localAdmin: LocalAdmin;
  sendStatus(): void;
  /** The handoff transition (cluster-transitions.ts): the gap and the successor's entry, or null when the successor did not take over. */
  handoff(to: string, cause: HandoffCause): Promise<HandoffResult | null>;
}

export class ClusterAdmin {
  readonly forwarder = new AdminForwarder();

  constructor(private readonly node: AdminContext) {}

  async run(op: AdminOp, who: string): Promise<AdminResult> {
    if (op.op === 'restore') return this.restore(op.node);
    if (this.node.state.role() === 'active') {
      if (op.op === 'handoff') return this.apiHandoff(op.target);
      return this.runLocal(op);
    }
    const active = this.node.watch.activeId();
    const peer = active === null ? undefined : this.node.mesh.peers.get(active);
    if (peer === undefined) return unavailable('no active node is known right now (an election or a handoff is under way); try again in a moment');
    return this.forwarder.forward(peer, op, `${who} via ${this.node.self.id}`);
  }

  private async runLocal(op: AdminOp & { op: 'force-release' | 'kick' | 'release-client' }): Promise<AdminResult> {
    if (this.node.state.phase !== 'active') return unavailable(`node ${this.node.self.id} is ${this.node.state.phase}; try again in a moment`);
    // A bulk release runs in slices over several loop turns: a node that stopped being the active one meanwhile stops there.
    const stopReason = () => (this.node.state.phase === 'active' ? null : `node ${this.node.self.id} is ${this.node.state.phase}`);
    return this.node.localAdmin.run(op, stopReason);
  }

  private async apiHandoff(target: string | null): Promise<AdminResult> {
    const targets = this.node.watch.handoffTargets();
    if (target !== null && !this.node.peers.some((p) => p.id === target)) return { ok: false, error: 'not-found', detail: `no node ${target} in the cluster` };
    if (target === this.node.self.id) return { ok: false, error: 'conflict', detail: `${target} is already the active node` };
    const to = target ?? targets[0] ?? null;
    if (to === null || !targets.includes(to)) {
      return {
        ok: false,
        error: 'conflict',
        detail: to === null ? 'no standby is alive and in sync to hand off to' : `${to} is not alive and in sync: it cannot take over now`,
      };
    }
    const done = await this.node.handoff(to, 'api-handoff');
    if (done === null) return { ok: false, error: 'conflict', detail: `${to} did not take over in time; ${this.node.self.id} stays active` };
    // The role has moved; what its clients went through is still to come (claims reconnecting,
    // re-sent requests): `failover` names the timeline entry whose `clients` figures follow it.
    return {
      ok: true,
      body: { handoff: { from: this.node.self.id, target: to, gapMs: done.gapMs, failover: done.failover } },
      detail: `to ${to}, ${done.gapMs.toFixed(1)} ms without an active node`,
    };
  }

  private restore(node: string | null): AdminResult {
    if (node !== null && !this.node.peers.some((p) => p.id === node)) return { ok: false, error: 'not-found', detail: `no node ${node} in the cluster` };
    const yielded = this.node.watch.yieldedNodes();
    const targets = node === null ? yielded : yielded.filter((id) => id === node);
    if (targets.length === 0)
      return {
        ok: false,
        error: 'conflict',
        detail: node === null ? 'no node has yielded: nothing to restore' : `${node} has not yielded: nothing to restore`,
      };
    for (const id of targets) {
      if (id === this.node.self.id) this.node.state.yielded = false;
      else {
        const peer = this.node.mesh.peers.get(id);
        if (peer !== undefined) this.node.mesh.send(peer, { t: 'restore' });
      }
    }
    this.node.sendStatus();
    return { ok: true, body: { restored: targets }, detail: targets.join(', ') };
  }

  /** An operation forwarded by a standby: run here if this node is still the active one. */
  async serve(peer: MeshPeer, req: number, who: string, read: ReadAdminOp): Promise<void> {
    // The peer edge parsed the op once as the message was decoded (peer-messages.ts: adminOpFromWire), as the HTTP edge does.
    let result: AdminResult;
    if (!read.ok) result = read;
    else if (this.node.state.role() !== 'active') result = unavailable(`${this.node.self.id} is no longer the active node`);
    else {
      result = await this.run(read.op, who);
      this.node.localAdmin.audit(who, read.op, result);
    }
    this.node.mesh.send(peer, { t: 'admin-result', req, result });
  }
}
