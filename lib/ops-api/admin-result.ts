// The outcome of an admin op, as plain JSON-safe data, and the reading of one at the edge where
// it comes back: computed on the active node, it may have crossed a peer link from a node of
// another build, so the HTTP handler (server/api-handlers/admin-action.ts) and the daemon's
// audit of a forwarded op read it through these checks, not as trusted data.
import { ERRORS, type ErrorName } from '../errors.ts';
import type { AuditEntry } from './api-types.ts';

/**
 * The outcome of an admin operation, as plain JSON-safe data: it may have been computed on the
 * active node and carried back over the peer link (a standby forwards mutations). The HTTP
 * handler turns it into the response and the audit entry.
 */
export type AdminResult =
  | {
      ok: true;
      body: unknown;
      detail: string | null;
      /** Further audit entries, one per lock an op changed (a bulk release by client: each a force-release of `target`). */
      audits?: readonly AdminAudit[];
    }
  | { ok: false; error: ErrorName; detail: string };

export interface AdminAudit {
  target: string;
  detail: string;
}

/**
 * Released locks of one bulk release that get an audit entry of their own (the first, by name);
 * the summary entry counts the rest. 10,000 entries of ~480 bytes each would rotate the earlier
 * history out of the file, and push it out of the 1,000 kept in memory (issue 26).
 */
export const MAX_BULK_AUDIT_LOCKS = 100;

/**
 * A result that crossed a peer link names its error as a string; one this build does not know
 * (a peer of a newer version) becomes `internal`, so the HTTP answer still has a status.
 */
export function knownError(error: string): ErrorName {
  return Object.hasOwn(ERRORS, error) ? (error as ErrorName) : 'internal';
}

/**
 * The per-lock audit entries an op's result carries, checked: a result may have crossed a peer
 * link from a node of another build, and the log must get only well-formed, bounded entries.
 */
export function resultAudits(result: AdminResult): AdminAudit[] {
  if (!result.ok || !Array.isArray(result.audits)) return [];
  const out: AdminAudit[] = [];
  for (const a of result.audits.slice(0, MAX_BULK_AUDIT_LOCKS)) {
    if (typeof a === 'object' && a !== null && typeof a.target === 'string' && typeof a.detail === 'string') {
      out.push({ target: a.target.slice(0, 256), detail: a.detail.slice(0, 1024) });
    }
  }
  return out;
}

/**
 * Writes the per-lock entries of an op's result (a bulk release by client: one force-release
 * entry per lock it freed, after the op's own entry), under `who`. The one place both the node
 * that took the request (server/api-handlers/admin-action.ts) and the active that ran a
 * forwarded op (server/admin-ops/forwarded-op-audit.ts) write them.
 */
export function recordResultAudits(audit: { record(entry: Omit<AuditEntry, 'at'>): void }, who: string, result: AdminResult): void {
  for (const a of resultAudits(result)) audit.record({ who, action: 'force-release', target: a.target, result: 'ok', detail: a.detail });
}
