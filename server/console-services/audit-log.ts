// Who did what through the ops API (force-release, kick, handoff, restore, sign-in, sign-out):
// kept in memory for the dashboard and appended as JSON lines to <dataDir>/audit.log, so an
// operator can answer "who released that lock?" after a restart too. In a cluster the peers'
// entries come in too (server/cluster/audit-replication.ts) and are kept and written the same
// way, each once (lib/cluster/audit-ring.ts): every node's log is the cluster's.
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditRing } from '../../lib/cluster/audit-ring.ts';
import { AUDIT_ACTIONS, type AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { AuditFacade } from '../daemon/daemon-facade.ts';

export const AUDIT_FILE = 'audit.log';
/** Past this size the log moves to audit.log.1 (replacing an older one) and starts afresh. */
export const AUDIT_ROTATE_BYTES = 10 * 1024 * 1024;
/** Entries kept in memory (what `recent` can return). */
export const AUDIT_MEMORY = 1000;
/** Entries read back from the file at start. */
export const AUDIT_RELOAD = 200;
/** Tail read size: 200 entries are ~40 KB; a few chunks more cover unusually long details. */
const TAIL_CHUNK = 64 * 1024;
const TAIL_MAX = 4 * TAIL_CHUNK;

const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

/** Which node and process records entries: their `node`, and the middle of their `id`. */
export interface AuditOrigin {
  node: string;
  instance: string;
}

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
async function readTail(file: FileHandle, count: number): Promise<{ entries: AuditEntry[]; tornEnd: boolean }> {
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

export class AuditLog implements AuditFacade {
  private readonly entries: AuditRing;
  /** Entries this process recorded: the last part of their id. */
  private recorded = 0;
  private readonly listeners = new Set<(entry: AuditEntry) => void>();
  /** Appends run one after another on this chain, so the file keeps the order of record(). */
  private writes: Promise<void> = Promise.resolve();
  private writeFailed = false;
  private closed: Promise<void> | null = null;

  private constructor(
    private file: FileHandle | null,
    private readonly path: string | null,
    history: AuditEntry[],
    /** Bytes in the current file, to know when to rotate. */
    private size: number,
    private readonly rotateBytes: number,
    private readonly origin: AuditOrigin,
  ) {
    this.entries = new AuditRing(AUDIT_MEMORY, history);
  }

  /** `dataDir` null keeps the log in memory only (tests, and daemons without a data dir). */
  static async open(
    dataDir: string | null,
    rotateBytes = AUDIT_ROTATE_BYTES,
    origin: AuditOrigin = { node: 'local', instance: String(process.pid) },
  ): Promise<AuditLog> {
    if (dataDir === null) return new AuditLog(null, null, [], 0, rotateBytes, origin);
    await mkdir(dataDir, { recursive: true });
    const path = join(dataDir, AUDIT_FILE);
    const file = await open(path, 'a+', 0o600);
    try {
      const tail = await readTail(file, AUDIT_RELOAD);
      const log = new AuditLog(file, path, tail.entries, (await file.stat()).size, rotateBytes, origin);
      // End a torn last line first, or the next entry would be glued to it and lost as well.
      if (tail.tornEnd) log.append('\n');
      return log;
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  record(entry: Omit<AuditEntry, 'at'>): void {
    const { node, instance } = this.origin;
    const full: AuditEntry = {
      at: Date.now(),
      who: entry.who,
      action: entry.action,
      target: entry.target,
      result: entry.result,
      detail: entry.detail,
      node,
      id: `${node}/${instance}/${++this.recorded}`,
    };
    this.entries.merge([full]);
    this.keep(full);
  }

  /**
   * Entries a peer replicated (checked and bounded by the peer protocol): those not kept yet are
   * kept, written to this node's file and shown, like this node's own.
   */
  mergeRemote(entries: readonly AuditEntry[]): AuditEntry[] {
    const added = this.entries.merge(entries);
    for (const e of added) this.keep(e);
    return added;
  }

  private keep(full: AuditEntry): void {
    if (this.file !== null && this.closed === null) this.append(`${JSON.stringify(full)}\n`);
    for (const listener of this.listeners) {
      try {
        listener(full);
      } catch (err) {
        // A broken subscriber must not turn an admin action that succeeded into an error reply.
        process.stderr.write(`baton: audit subscriber failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  }

  /** Newest last. */
  recent(limit: number): AuditEntry[] {
    return this.entries.recent(limit);
  }

  subscribe(listener: (entry: AuditEntry) => void): () => void {
    // A wrapper per subscription, so the same function subscribed twice unsubscribes separately.
    const wrapped = (entry: AuditEntry) => listener(entry);
    this.listeners.add(wrapped);
    return () => {
      this.listeners.delete(wrapped);
    };
  }

  /** Waits for every append recorded so far, then closes the file; later entries stay in memory only. Safe to call twice. */
  close(): Promise<void> {
    this.closed ??= this.writes.then(() => this.file?.close());
    return this.closed;
  }

  private append(line: string): void {
    this.writes = this.writes
      .then(async () => {
        if (this.size >= this.rotateBytes) await this.rotate();
        if (this.file === null) return;
        await this.file.appendFile(line, 'utf8');
        this.size += Buffer.byteLength(line);
      })
      .catch((err: unknown) => {
        // The action itself happened; losing its log line is reported once, not on every action.
        if (this.writeFailed) return;
        this.writeFailed = true;
        process.stderr.write(
          `baton: cannot append to the audit log ${this.path ?? ''}: ${err instanceof Error ? err.message : String(err)} (further failures are not reported)\n`,
        );
      });
  }

  /** Runs inside the write chain, so no append sees a half-rotated file. */
  private async rotate(): Promise<void> {
    if (this.file === null || this.path === null) return;
    const old = this.file;
    this.file = null;
    await old.close();
    await rename(this.path, `${this.path}.1`);
    this.file = await open(this.path, 'a+', 0o600);
    this.size = 0;
  }
}
