// Export of what the console shows (the lock table, one lock's history, the audit) as JSON or
// CSV, built in the browser from the data already on the page, so an export is exactly the
// table the operator was looking at. Pure functions: the download itself is
// components/ui/download.ts.

export type ExportCell = string | number | boolean | null | undefined;

/**
 * RFC 4180 CSV: lines end in CRLF; fields with a separator a spreadsheet may split on (comma,
 * semicolon, tab), a quote, CR or LF are quoted (quotes doubled). Formulas are defused as OWASP
 * advises, so a hostile lock name or client identity opened in a spreadsheet is text: a field
 * that starts with =, +, - or @ (or a tab/CR) gets a leading apostrophe, and so does every part
 * of it a spreadsheet could cut off at a comma, semicolon, tab or line break (`x;=1+1` is
 * written `"x;'=1+1"`: a spreadsheet in a semicolon locale, or one that ignores the quotes,
 * would otherwise run `=1+1`). Spaces and quotes before the formula character do not hide it.
 */
export function toCsv(header: readonly string[], rows: readonly (readonly ExportCell[])[]): string {
  const lines = [header.map(csvField).join(',')];
  for (const row of rows) lines.push(row.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

const FORMULA_AT_START = /^[ "]*[=+\-@]|^[\t\r]/;
const FORMULA_AFTER_SEPARATOR = /([,;\t\r\n][ "]*)(?=[=+\-@])/g;
const NEEDS_QUOTES = /[",;\t\r\n]/;

function csvField(cell: ExportCell): string {
  if (cell === null || cell === undefined) return '';
  let text = String(cell);
  if (typeof cell === 'string') {
    text = text.replace(FORMULA_AFTER_SEPARATOR, "$1'");
    if (FORMULA_AT_START.test(text)) text = `'${text}`;
  }
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
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
