// The admin operations of a cluster node: run on the active node (force-release and kick on
// its engine, handoff to a standby), forwarded to it by a standby, and restore, which goes
// straight to the yielded node it names. Results are plain data so they can cross the peer link.
import type { AdminOp, AdminResult } from '../daemon/daemon-facade.ts';
import { adminOpFromWire } from '../console-services/admin-request.ts';
import { AdminForwarder, unavailable } from './admin-forwarder.ts';
import type { ClusterNode, ClusterNodeDeps } from './cluster-node.ts';
import type { MeshPeer } from './peer-mesh.ts';

export class ClusterAdmin {
  readonly forwarder = new AdminForwarder();

  constructor(
    private readonly node: ClusterNode,
    private readonly d: ClusterNodeDeps,
  ) {}

  async run(op: AdminOp, who: string): Promise<AdminResult> {
    if (op.op === 'restore') return this.restore(op.node);
    if (this.node.role() === 'active') {
      if (op.op === 'handoff') return this.apiHandoff(op.target);
      return this.runLocal(op);
    }
    const active = this.node.activeId();
    const peer = active === null ? undefined : this.node.mesh.peers.get(active);
    if (peer === undefined) return unavailable('no active node is known right now (an election or a handoff is under way); try again in a moment');
    return this.forwarder.forward(peer, op, `${who} via ${this.node.self.id}`);
  }

  private runLocal(op: AdminOp & { op: 'force-release' | 'kick' }): AdminResult {
    if (this.node.phase !== 'active') return unavailable(`node ${this.node.self.id} is ${this.node.phase}; try again in a moment`);
    return this.d.runLocally(op);
  }

  private async apiHandoff(target: string | null): Promise<AdminResult> {
    const targets = this.node.handoffTargets();
    if (target !== null && !this.d.cluster.config.peers.some((p) => p.id === target))
      return { ok: false, error: 'not-found', detail: `no node ${target} in the cluster` };
    if (target === this.node.self.id) return { ok: false, error: 'conflict', detail: `${target} is already the active node` };
    const to = target ?? targets[0] ?? null;
    if (to === null || !targets.includes(to)) {
      return {
        ok: false,
        error: 'conflict',
        detail: to === null ? 'no standby is alive and in sync to hand off to' : `${to} is not alive and in sync: it cannot take over now`,
      };
    }
    const gap = await this.node.handoff(to, 'api-handoff');
    if (gap === null) return { ok: false, error: 'conflict', detail: `${to} did not take over in time; ${this.node.self.id} stays active` };
    return { ok: true, body: { handoff: { from: this.node.self.id, target: to, gapMs: gap } }, detail: `to ${to}, gap ${gap.toFixed(1)} ms` };
  }

  private restore(node: string | null): AdminResult {
    if (node !== null && !this.d.cluster.config.peers.some((p) => p.id === node))
      return { ok: false, error: 'not-found', detail: `no node ${node} in the cluster` };
    const yielded = this.node.yieldedNodes();
    const targets = node === null ? yielded : yielded.filter((id) => id === node);
    if (targets.length === 0)
      return {
        ok: false,
        error: 'conflict',
        detail: node === null ? 'no node has yielded: nothing to restore' : `${node} has not yielded: nothing to restore`,
      };
    for (const id of targets) {
      if (id === this.node.self.id) this.node.yielded = false;
      else {
        const peer = this.node.mesh.peers.get(id);
        if (peer !== undefined) this.node.mesh.send(peer, { t: 'restore' });
      }
    }
    this.node.sendStatus();
    return { ok: true, body: { restored: targets }, detail: targets.join(', ') };
  }

  yieldedNodes(): string[] {
    const out: string[] = [];
    for (const p of this.d.cluster.config.peers) {
      if (p.id === this.node.self.id) {
        if (this.node.yielded) out.push(p.id);
      } else if (this.node.isAlive(p.id) && this.node.statuses.get(p.id)?.yielded === true) out.push(p.id);
    }
    return out;
  }

  /** An operation forwarded by a standby: run here if this node is still the active one. */
  async serve(peer: MeshPeer, req: number, who: string, raw: unknown): Promise<void> {
    // The peer edge: the op is parsed here once (name, token, claim id), as the HTTP edge does.
    const read = adminOpFromWire(raw);
    let result: AdminResult;
    if (!read.ok) result = read;
    else if (this.node.role() !== 'active') result = unavailable(`${this.node.self.id} is no longer the active node`);
    else {
      result = await this.run(read.op, who);
      this.d.audit(who, read.op, result);
    }
    this.node.mesh.send(peer, { t: 'admin-result', req, result });
  }
}
