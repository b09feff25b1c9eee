// Export of what the console shows (the lock table, one lock's history, the audit) as JSON or
// CSV, built in the browser from the data already on the page, so an export is exactly the
// table the operator was looking at. Pure functions: the download itself is
// components/ui/download.ts.

export type ExportCell = string | number | boolean | null | undefined;

/**
 * RFC 4180 CSV: fields with a comma, quote, CR or LF are quoted (quotes doubled); lines end in
 * CRLF. A field that starts with =, +, - or @ (or a tab/CR) gets a leading apostrophe, so a
 * hostile lock name or client identity opened in a spreadsheet is text, not a formula.
 */
export function toCsv(header: readonly string[], rows: readonly (readonly ExportCell[])[]): string {
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function csvField(cell: ExportCell): string {
  if (cell === null || cell === undefined) return '';
  let text = String(cell);
  if (typeof cell === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Pretty JSON with a trailing newline (what `jq` would print). */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A file name for an export: "baton-locks-2026-12-03T11-52-00Z.csv" (no characters a shell or a file system dislikes). */
export function exportFileName(what: string, at: number, ext: 'csv' | 'json'): string {
  const stamp = new Date(at)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
  const safe = what.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `baton-${safe}-${stamp}.${ext}`;
}
