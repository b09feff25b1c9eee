// The audit as the operator downloads it from the dashboard: every entry shown (the cluster's,
// newest last, as /api/v1/audit gives them), as CSV for a spreadsheet or JSON for a script.
// Pure: components/feed/audit-export.tsx does the download.
import type { AuditEntry } from '../ops-api/api-types.ts';
import { toCsv, toJson } from './table-export.ts';

export const AUDIT_CSV_HEADER = ['at', 'node', 'who', 'action', 'target', 'result', 'detail', 'id'] as const;

/** One line per entry; `at` as an ISO time (UTC), a missing node or id left empty. */
export function auditCsv(entries: readonly AuditEntry[]): string {
  return toCsv(
    AUDIT_CSV_HEADER,
    entries.map((e) => [new Date(e.at).toISOString(), e.node, e.who, e.action, e.target, e.result, e.detail, e.id]),
  );
}

/** `{entries}` in the shape of GET /api/v1/audit, so a script reads either the same way. */
export function auditJson(entries: readonly AuditEntry[]): string {
  return toJson({ entries });
}
