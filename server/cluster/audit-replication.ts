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
import { boundAuditEntry } from '../../lib/cluster/audit-ring.ts';
import { MAX_AUDIT_BATCH, MAX_AUDIT_BATCH_BYTES } from '../../lib/cluster/peer-messages.ts';
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

export class AuditReplication {
  private audit: ReplicatedAudit | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly selfId: string,
    private readonly mesh: Pick<PeerMesh, 'send' | 'broadcast'>,
    /** Runs a catch-up's next message on a later loop turn; tests pass one that runs at once. */
    private readonly defer: (fn: () => void) => void = (fn) => void setImmediate(fn).unref(),
  ) {}

  /** The audit log exists only once the ops services are built (after the node): attached then. */
  attach(audit: ReplicatedAudit): void {
    this.detach();
    this.audit = audit;
    this.unsubscribe = audit.subscribe((e) => {
      // Only this node's own entries: what came from a peer, its peers have had from it.
      // Within the protocol's bounds: an over-long field would make the peer close the link (a
      // malformed message), so a long field travels cut, with an ellipsis (this node's file keeps it whole).
      const sent = boundAuditEntry(e);
      if (sent.node === this.selfId && replicable(sent)) this.mesh.broadcast({ t: 'audit', entries: [sent] });
    });
    // Links that came up before the log was attached get the catch-up now.
    this.inTurns((entries) => this.mesh.broadcast({ t: 'audit', entries }));
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.audit = null;
  }

  /** A link came up: the peer gets this node's most recent entries (its own and those it received). */
  linkUp(peer: MeshPeer): void {
    if (this.audit !== null) this.inTurns((entries) => this.mesh.send(peer, { t: 'audit', entries }));
  }

  receive(entries: readonly AuditEntry[]): void {
    this.audit?.mergeRemote(entries);
  }

  /**
   * Everything kept, newest first, in messages within the protocol's bounds: the first now, one
   * more each loop turn after (10,000 entries are 50 messages; sent in one turn they held the
   * loop, and the lock path with it, for tens of ms).
   */
  private inTurns(send: (entries: Replicable[]) => void): void {
    const all = (this.audit?.recent(Number.MAX_SAFE_INTEGER) ?? []).map(boundAuditEntry).filter(replicable).reverse();
    const batches = auditBatches(all);
    const next = () => {
      const batch = batches.shift();
      if (batch === undefined || this.audit === null) return;
      send(batch);
      if (batches.length > 0) this.defer(next);
    };
    next();
  }
}

/**
 * The most JSON bytes an entry can take in a message, without encoding it: a UTF-16 unit is at
 * most 3 bytes of UTF-8, or 6 as an escape (`\u001f`); keys, quotes and numbers fit in 160.
 */
function jsonBytesAtMost(e: AuditEntry): number {
  return 6 * (e.who.length + e.action.length + e.target.length + e.result.length + (e.detail?.length ?? 0) + (e.node?.length ?? 0) + (e.id?.length ?? 0)) + 160;
}

/** Cuts entries into messages of at most MAX_AUDIT_BATCH entries and MAX_AUDIT_BATCH_BYTES of JSON, in order. */
export function auditBatches<T extends AuditEntry>(entries: readonly T[], maxBytes = MAX_AUDIT_BATCH_BYTES): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = jsonBytesAtMost(e);
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
