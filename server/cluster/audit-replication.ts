// Every node's audit shows every admin action of the cluster: each node sends the entries it
// records to its peers as they are recorded, and when a peer link comes up (a node joins,
// restarts, or a link heals) both sides send everything they keep (the retention of
// server/audit/audit-log.ts, its own entries and those it received), newest first, in messages
// of at most MAX_AUDIT_BATCH entries and MAX_AUDIT_BATCH_BYTES. Each node keeps what it
// receives once (by entry id, lib/cluster/audit-ring.ts), so the catch-up may repeat what a
// peer already has: a node that was down gets what the cluster recorded meanwhile, however
// much, up to its retention. The links are TLS with the cluster's key (peer-tls.ts) and a
// message is handled only after both hellos; the `audit` message is checked and bounded by
// lib/cluster/peer-messages.ts (at most 200 entries, every field bounded).
import { AUDIT_FIELD_MAX, MAX_AUDIT_BATCH, MAX_AUDIT_BATCH_BYTES } from '../../lib/cluster/peer-messages.ts';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { MeshPeer, PeerMesh } from './peer-mesh.ts';

/** The node's audit log, as replication uses it (server/audit/audit-log.ts). */
export interface ReplicatedAudit {
  recent(limit: number): AuditEntry[];
  mergeRemote(entries: readonly AuditEntry[]): unknown;
  subscribe(listener: (entry: AuditEntry) => void): () => void;
}

type Replicable = AuditEntry & { node: string; id: string };

function replicable(e: AuditEntry): e is Replicable {
  return e.node !== undefined && e.id !== undefined;
}

/**
 * Within the protocol's bounds: an over-long field would make the peer close the link (a
 * malformed message), so a long detail travels cut, with an ellipsis (this node's file keeps it whole).
 */
function bounded(e: Replicable): Replicable {
  const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
  return {
    ...e,
    who: cut(e.who, AUDIT_FIELD_MAX.who),
    target: cut(e.target, AUDIT_FIELD_MAX.target),
    result: cut(e.result, AUDIT_FIELD_MAX.result),
    detail: e.detail === null ? null : cut(e.detail, AUDIT_FIELD_MAX.detail),
  };
}

export class AuditReplication {
  private audit: ReplicatedAudit | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly selfId: string,
    private readonly mesh: Pick<PeerMesh, 'send' | 'broadcast'>,
  ) {}

  /** The audit log exists only once the ops services are built (after the node): attached then. */
  attach(audit: ReplicatedAudit): void {
    this.detach();
    this.audit = audit;
    this.unsubscribe = audit.subscribe((e) => {
      // Only this node's own entries: what came from a peer, its peers have had from it.
      if (e.node === this.selfId && replicable(e)) this.mesh.broadcast({ t: 'audit', entries: [bounded(e)] });
    });
    // Links that came up before the log was attached get the catch-up now.
    for (const entries of this.catchUp()) this.mesh.broadcast({ t: 'audit', entries });
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.audit = null;
  }

  /** A link came up: the peer gets this node's most recent entries (its own and those it received). */
  linkUp(peer: MeshPeer): void {
    if (this.audit !== null) for (const entries of this.catchUp()) this.mesh.send(peer, { t: 'audit', entries });
  }

  receive(entries: readonly AuditEntry[]): void {
    this.audit?.mergeRemote(entries);
  }

  /** Everything kept, newest first, cut into messages within the protocol's bounds. */
  private catchUp(): Replicable[][] {
    const all = (this.audit?.recent(Number.MAX_SAFE_INTEGER) ?? []).filter(replicable).map(bounded).reverse();
    return auditBatches(all);
  }
}

/** Cuts entries into messages of at most MAX_AUDIT_BATCH entries and MAX_AUDIT_BATCH_BYTES of JSON, in order. */
export function auditBatches<T extends AuditEntry>(entries: readonly T[], maxBytes = MAX_AUDIT_BATCH_BYTES): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = Buffer.byteLength(JSON.stringify(e)) + 1;
    if (batch.length > 0 && (batch.length >= MAX_AUDIT_BATCH || bytes + size > maxBytes)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
