// Reading back the end of the audit file at start (audit-log.ts): the log grows without bound,
// so only its tail is read, and a torn or foreign line is skipped.
import type { FileHandle } from 'node:fs/promises';
import { AUDIT_ACTIONS, type AuditEntry } from '../../lib/ops-api/api-types.ts';

/** Tail read size: 200 entries are ~40 KB; a few chunks more cover unusually long details. */
const TAIL_CHUNK = 64 * 1024;
const TAIL_MAX = 4 * TAIL_CHUNK;

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

/**
 * The last `count` well-formed entries of the file, reading only its tail (the log grows
 * without bound; start-up must not read all of it). A torn last line from a crash is skipped.
 */
export async function readTail(file: FileHandle, count: number): Promise<{ entries: AuditEntry[]; tornEnd: boolean }> {
  const { size } = await file.stat();
  const start = Math.max(0, size - TAIL_MAX);
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
  return { entries: entries.slice(-count), tornEnd: text.length > 0 && !text.endsWith('\n') };
}
