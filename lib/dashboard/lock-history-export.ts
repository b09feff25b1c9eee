// One lock's grant history as the detail panel exports it (CSV and JSON, through table-export.ts),
// and the words the panel uses for how a grant ended.
import type { GrantEnd, GrantRecord, LockHistory } from '../ops-api/api-types.ts';
import { type ExportCell, toCsv, toJson } from './table-export.ts';

export const END_LABEL: Record<GrantEnd, string> = {
  release: 'released',
  close: 'connection closed',
  expiry: 'lease expired',
  'force-release': 'force-released',
  kick: 'kicked (waiter)',
  failover: 'failover',
};

const HEADER = ['claimId', 'protocol', 'client', 'clientName', 'token', 'grantedAt', 'queueWaitMs', 'heldMs', 'endedAt', 'end'] as const;

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function row(g: GrantRecord): ExportCell[] {
  return [g.claimId, g.protocol, g.client, g.clientName, g.token, isoOrNull(g.grantedAt), g.queueWaitMs, g.heldMs, isoOrNull(g.endedAt), g.end];
}

/** Newest first, as shown; times as ISO 8601 UTC, durations in ms. */
export function lockHistoryCsv(history: LockHistory): string {
  return toCsv(HEADER, history.grants.map(row));
}

/** The route's answer as it came (epoch ms times), so a script reads it like the API. */
export function lockHistoryJson(history: LockHistory): string {
  return toJson(history);
}
