// The lock table as a file: the rows the operator is looking at (after search and filters, in
// the table's order), with lease and hold times as of the moment of the export.
import { heldForAt, leaseRemainingAt, type LockRow } from './dashboard-state.ts';
import { toCsv, toJson } from './table-export.ts';

export const LOCK_EXPORT_COLUMNS = [
  'name',
  'protocol',
  'client',
  'clientName',
  'token',
  'heldForMs',
  'leaseLeftMs',
  'sliding',
  'reconnecting',
  'queueLength',
] as const;

export interface ExportedLock {
  name: string;
  protocol: string | null;
  client: string | null;
  clientName: string | null;
  token: string | null;
  heldForMs: number | null;
  leaseLeftMs: number | null;
  sliding: boolean | null;
  reconnecting: boolean;
  queueLength: number;
}

/** One row as exported at local time `now` (times in whole milliseconds). */
export function exportedLock(row: LockRow, now: number): ExportedLock {
  const h = row.summary.holder;
  const held = heldForAt(row, now);
  const left = leaseRemainingAt(row, now);
  return {
    name: row.summary.name,
    protocol: h?.protocol ?? null,
    client: h?.client ?? null,
    clientName: h?.clientName ?? null,
    token: h?.token ?? null,
    heldForMs: held === null ? null : Math.floor(held),
    leaseLeftMs: left === null ? null : Math.floor(left),
    sliding: h === null ? null : h.sliding,
    reconnecting: h?.reconnecting === true,
    queueLength: row.summary.queueLength,
  };
}

export function locksToCsv(rows: readonly LockRow[], now: number): string {
  return toCsv(
    LOCK_EXPORT_COLUMNS,
    rows.map((r) => {
      const e = exportedLock(r, now);
      return LOCK_EXPORT_COLUMNS.map((c) => e[c]);
    }),
  );
}

/** `{exportedAt, view, count, locks}`: the file says which view (the URL query) it came from. */
export function locksToJson(rows: readonly LockRow[], now: number, exportedAt: number, view: string): string {
  return toJson({ exportedAt, view, count: rows.length, locks: rows.map((r) => exportedLock(r, now)) });
}
