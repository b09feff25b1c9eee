// Admin operations across the peer link: a standby sends the operation to the active node
// and waits (bounded) for its result; the active runs it and answers on the same link.
import type { AdminOp, AdminResult } from '../daemon/daemon-facade.ts';
import type { MeshPeer } from './peer-mesh.ts';

const FORWARD_TIMEOUT_MS = 5_000;

export class AdminForwarder {
  private nextReq = 1;
  private readonly pending = new Map<number, { peer: string; resolve(r: AdminResult): void; timer: NodeJS.Timeout }>();

  forward(peer: MeshPeer, op: AdminOp, who: string): Promise<AdminResult> {
    const link = peer.link;
    if (link === null) return Promise.resolve(unavailable(`the active node ${peer.config.id} is not connected`));
    const req = this.nextReq++;
    return new Promise<AdminResult>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(req);
        resolve(unavailable(`the active node ${peer.config.id} did not answer in time`));
      }, FORWARD_TIMEOUT_MS);
      this.pending.set(req, { peer: peer.config.id, resolve, timer });
      link.send({ t: 'admin', req, who, op });
    });
  }

  onResult(req: number, result: unknown): void {
    const p = this.pending.get(req);
    if (p === undefined) return;
    this.pending.delete(req);
    clearTimeout(p.timer);
    p.resolve(isAdminResult(result) ? result : unavailable('the active node answered with something unreadable'));
  }

  /** The link to `peer` went down: its pending operations fail now, not at the timeout. */
  onLinkDown(peer: string): void {
    for (const [req, p] of this.pending) {
      if (p.peer !== peer) continue;
      this.pending.delete(req);
      clearTimeout(p.timer);
      p.resolve(unavailable(`the link to the active node ${peer} went down; the operation may or may not have run there`));
    }
  }
}

export function unavailable(detail: string): AdminResult {
  return { ok: false, error: 'server-going-away', detail };
}

function isAdminResult(v: unknown): v is AdminResult {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { ok?: unknown; error?: unknown; detail?: unknown };
  return r.ok === true || (r.ok === false && typeof r.error === 'string' && typeof r.detail === 'string');
}

/** Admin ops arrive from peers as unknown JSON: only the four known shapes pass. */
export function readAdminOp(v: unknown): AdminOp | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  switch (o.op) {
    case 'force-release':
      return typeof o.lock === 'string' && (o.token === null || typeof o.token === 'string') ? { op: 'force-release', lock: o.lock, token: o.token } : null;
    case 'kick':
      return typeof o.lock === 'string' && typeof o.claimId === 'number' ? { op: 'kick', lock: o.lock, claimId: o.claimId } : null;
    case 'handoff':
      return o.target === null || typeof o.target === 'string' ? { op: 'handoff', target: o.target } : null;
    case 'restore':
      return o.node === null || typeof o.node === 'string' ? { op: 'restore', node: o.node } : null;
    default:
      return null;
  }
}
