// Reading back the audit files at start (audit-log.ts): the newest entries up to the node's
// retention, from the current file and, when it holds too few, the rotated one before it. Only
// the tail of each is read (at most `maxBytes` in all), and a torn or foreign line is skipped.
import { type FileHandle, open } from 'node:fs/promises';
import { AUDIT_ACTIONS, type AuditEntry } from '../../lib/ops-api/api-types.ts';

const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

function isAuditEntry(v: unknown): v is AuditEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.at === 'number' &&
    typeof e.who === 'string' &&
    typeof e.action === 'string' &&
    ACTIONS.has(e.action) &&
    typeof e.target === 'string' &&
    typeof e.result === 'string' &&
    (e.detail === null || typeof e.detail === 'string') &&
    (e.node === undefined || typeof e.node === 'string') &&
    (e.id === undefined || typeof e.id === 'string')
  );
}

/** Reads the last `maxBytes` of a file (all of a smaller one) as lines; the first is dropped when the read began mid-line. */
async function tailLines(file: FileHandle, maxBytes: number): Promise<{ lines: string[]; tornEnd: boolean; size: number }> {
  const { size } = await file.stat();
  const start = Math.max(0, size - maxBytes);
  const buf = Buffer.alloc(size - start);
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await file.read(buf, got, buf.length - got, start + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  // Splitting the bytes at '\n' is safe: 0x0A never occurs inside a multi-byte UTF-8 sequence.
  const text = buf.subarray(0, got).toString('utf8');
  const lines = text.split('\n');
  if (start > 0) lines.shift(); // began mid-line
  return { lines, tornEnd: text.length > 0 && !text.endsWith('\n'), size };
}

function parseLines(lines: readonly string[]): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      const parsed: unknown = JSON.parse(line);
      if (isAuditEntry(parsed)) entries.push(parsed);
    } catch {
      // a torn or foreign line: history is best effort, the rest is still worth showing
    }
  }
  return entries;
}

/**
 * The last `count` well-formed entries of the open current file and, when it holds fewer (or is
 * shorter than `maxBytes`), of the rotated file at `rotatedPath` before it; at most `maxBytes`
 * are read in all. `tornEnd`: the current file ends mid-line (a crash during an append).
 */
export async function readTail(
  file: FileHandle,
  count: number,
  maxBytes: number,
  rotatedPath: string | null = null,
): Promise<{ entries: AuditEntry[]; tornEnd: boolean }> {
  const current = await tailLines(file, maxBytes);
  let entries = parseLines(current.lines);
  const room = maxBytes - current.size;
  if (entries.length < count && room > 0 && rotatedPath !== null) {
    let older: FileHandle | null = null;
    try {
      older = await open(rotatedPath, 'r');
      entries = [...parseLines((await tailLines(older, room)).lines), ...entries];
    } catch (err) {
      // No rotated file yet is the usual case; another failure loses only the older history.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') process.stderr.write(`baton: cannot read ${rotatedPath}: ${(err as Error).message}\n`);
    } finally {
      await older?.close();
    }
  }
  return { entries: entries.slice(-count), tornEnd: current.tornEnd };
}
