// Admin operations across the peer link: a standby sends the operation to the active node
// and waits (bounded) for its result; the active runs it and answers on the same link.
import type { AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import { adminOpToWire } from '../../lib/ops-api/admin-request.ts';
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
      // The op leaves the process here: its token goes as text (read back by adminOpFromWire).
      link.send({ t: 'admin', req, who, op: adminOpToWire(op) });
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
