// Who did what through the ops API (force-release, kick, handoff, restore, sign-in, sign-out):
// kept in memory for the dashboard and appended as JSON lines to <dataDir>/audit.log, so an
// operator can answer "who released that lock?" after a restart too. In a cluster the peers'
// entries come in too (server/cluster/audit-replication.ts) and are kept and written the same
// way, each once (lib/cluster/audit-ring.ts): every node's log is the cluster's.
//
// Retention (docs/console.md, "The audit log"): memory keeps the newest AUDIT_MEMORY entries and
// at most AUDIT_MEMORY_BYTES of them (every field is bounded, so that is a ceiling); the disk
// keeps two files of AUDIT_ROTATE_BYTES (audit.log and audit.log.1), so at most twice that plus
// one write. A restart reads the newest entries of both files back, up to the memory retention:
// what this node recorded and what its peers replicated to it.
//
// A write that fails (a full disk, no inode for the new file at rotation) does not end the
// file: the lines wait in memory, in order, and are written by a retry every second; the
// outage shows in /healthz and /metrics (health()), and on stderr once when it begins and once
// when it ends (issue 26: a failed rotation left every later entry in memory only, silently).
import { mkdir, open, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditRing } from '../../lib/cluster/audit-ring.ts';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { AuditCursor, AuditFilter, AuditRow } from '../../lib/ops-api/audit-filter.ts';
import type { AuditFacade, AuditHealth } from '../../lib/ops-api/daemon-facade.ts';
import { readTail } from './audit-tail.ts';

export const AUDIT_FILE = 'audit.log';
/** Past this size the log moves to audit.log.1 (replacing an older one) and starts afresh. */
export const AUDIT_ROTATE_BYTES = 10 * 1024 * 1024;
/** Entries kept in memory (what the API pages through). */
export const AUDIT_MEMORY = 10_000;
/** And at most this many bytes of them (auditEntryBytes in lib/cluster/audit-ring.ts counts each at its most). */
export const AUDIT_MEMORY_BYTES = 16 * 1024 * 1024;
/** Bytes read back from the two files at start at most: all of them (the disk ceiling). */
export const AUDIT_RELOAD_BYTES = 2 * AUDIT_ROTATE_BYTES;
/** A failed write is tried again after this long. */
export const AUDIT_RETRY_MS = 1000;
/** Lines waiting for the file are kept up to this many bytes; past it the oldest are dropped (and counted). */
export const AUDIT_PENDING_BYTES = 4 * 1024 * 1024;
/** One write takes at most this much of what waits, so a rotation is not overshot by much. */
const BATCH_BYTES = 64 * 1024;
/** Which node and process records entries: their `node`, and the middle of their `id`. */
export interface AuditOrigin {
  node: string;
  instance: string;
}

export class AuditLog implements AuditFacade {
  private readonly entries: AuditRing;
  /** Entries this process recorded: the last part of their id. */
  private recorded = 0;
  private readonly listeners = new Set<(entry: AuditEntry) => void>();
  /** Lines not in the file yet, oldest first: written by one flush at a time, so the file keeps the order of record(). */
  private readonly pending: string[] = [];
  private pendingBytes = 0;
  /** How many of the first pending lines the append under way is writing. */
  private inFlight = 0;
  private dropped = 0;
  /** The flush under way (or the last one), for close(). */
  private writes: Promise<void> = Promise.resolve();
  private flushing = false;
  private retry: NodeJS.Timeout | null = null;
  /** Why the last write failed; null while writes succeed. */
  private failure: string | null = null;
  /** A failed append may have left part of a line: the next write starts on a fresh line. */
  private tornTail = false;
  private closed: Promise<void> | null = null;

  private constructor(
    private file: FileHandle | null,
    private readonly path: string | null,
    history: AuditEntry[],
    /** Bytes in the current file, to know when to rotate. */
    private size: number,
    private readonly rotateBytes: number,
    private readonly origin: AuditOrigin,
    private readonly retryMs: number,
  ) {
    this.entries = new AuditRing(AUDIT_MEMORY, history, AUDIT_MEMORY_BYTES);
  }

  /** `dataDir` null keeps the log in memory only (tests, and daemons without a data dir). */
  static async open(
    dataDir: string | null,
    rotateBytes = AUDIT_ROTATE_BYTES,
    origin: AuditOrigin = { node: 'local', instance: String(process.pid) },
    retryMs = AUDIT_RETRY_MS,
  ): Promise<AuditLog> {
    if (dataDir === null) return new AuditLog(null, null, [], 0, rotateBytes, origin, retryMs);
    await mkdir(dataDir, { recursive: true });
    const path = join(dataDir, AUDIT_FILE);
    const file = await open(path, 'a+', 0o600);
    try {
      const tail = await readTail(file, AUDIT_MEMORY, Math.max(AUDIT_RELOAD_BYTES, 2 * rotateBytes), `${path}.1`);
      const log = new AuditLog(file, path, tail.entries, (await file.stat()).size, rotateBytes, origin, retryMs);
      // End a torn last line first, or the next entry would be glued to it and lost as well.
      log.tornTail = tail.tornEnd;
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
    // Kept in memory within the fields' bounds; the file gets the entry whole.
    const [kept] = this.entries.merge([full]);
    this.keep(full, kept ?? full);
  }

  /**
   * Entries a peer replicated (checked and bounded by the peer protocol): those not kept yet are
   * kept, written to this node's file and shown, like this node's own.
   */
  mergeRemote(entries: readonly AuditEntry[]): AuditEntry[] {
    const added = this.entries.merge(entries);
    for (const e of added) this.keep(e, e);
    return added;
  }

  private keep(full: AuditEntry, shown: AuditEntry): void {
    if (this.path !== null && this.closed === null) this.append(`${JSON.stringify(full)}\n`);
    for (const listener of this.listeners) {
      try {
        listener(shown);
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

  /** One page back in time from `cursor` (lib/cluster/audit-ring.ts). */
  page(filter: AuditFilter, cursor: AuditCursor | null, limit: number): { entries: AuditRow[]; older: string | null } {
    return this.entries.page(filter, cursor, limit);
  }

  /** What arrived after position `after` (lib/cluster/audit-ring.ts). */
  since(filter: AuditFilter, after: number, limit: number): { entries: AuditRow[]; latest: number; more: boolean } {
    return this.entries.since(filter, after, limit);
  }

  /** The newest arrival position: changes whenever an entry is kept (the live feed tells pages). */
  get latest(): number {
    return this.entries.latest;
  }

  /** Entries and bytes kept in memory, for the docs' ceiling and its test. */
  retained(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.entries.byteSize };
  }

  subscribe(listener: (entry: AuditEntry) => void): () => void {
    // A wrapper per subscription, so the same function subscribed twice unsubscribes separately.
    const wrapped = (entry: AuditEntry) => listener(entry);
    this.listeners.add(wrapped);
    return () => {
      this.listeners.delete(wrapped);
    };
  }

  /** Whether the file gets what is recorded: for /healthz and /metrics. A log without a file is `ok`. */
  health(): AuditHealth {
    return { file: this.failure === null ? 'ok' : 'unwritable', pending: this.pending.length, dropped: this.dropped, error: this.failure };
  }

  /**
   * Waits for the write under way, tries once more to write what waits, then closes the file;
   * later entries stay in memory only. Safe to call twice.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (this.retry !== null) clearTimeout(this.retry);
      this.retry = null;
      await this.writes;
      if (this.pending.length > 0) await this.flush();
      await this.file?.close();
      this.file = null;
    })();
    return this.closed;
  }

  private append(line: string): void {
    this.pending.push(line);
    this.pendingBytes += Buffer.byteLength(line);
    // The oldest that are not being written right now go first (the write in flight takes the first `inFlight`).
    while (this.pendingBytes > AUDIT_PENDING_BYTES && this.pending.length > this.inFlight + 1) {
      const [oldest = ''] = this.pending.splice(this.inFlight, 1);
      this.pendingBytes -= Buffer.byteLength(oldest);
      this.dropped++;
    }
    // While a retry is set, the file is failing: the retry writes this line with the rest.
    if (!this.flushing && this.retry === null) this.writes = this.flush();
  }

  /** Writes what waits, in order; on a failure keeps it and sets a retry. One runs at a time. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        if (this.file === null) await this.reopen();
        else if (this.size >= this.rotateBytes) await this.rotate();
        const file = this.file as FileHandle | null;
        if (file === null) return;
        const count = this.batch();
        const text = (this.tornTail ? '\n' : '') + this.pending.slice(0, count).join('');
        this.tornTail = true; // until the append is known to be whole
        this.inFlight = count;
        try {
          await file.appendFile(text, 'utf8');
        } finally {
          this.inFlight = 0;
        }
        this.tornTail = false;
        this.size += Buffer.byteLength(text);
        for (const line of this.pending.splice(0, count)) this.pendingBytes -= Buffer.byteLength(line);
      }
      if (this.failure !== null) {
        process.stderr.write(`baton: the audit log ${this.path ?? ''} is written again\n`);
        this.failure = null;
      }
    } catch (err) {
      this.failed(err);
    } finally {
      this.flushing = false;
    }
  }

  /** How many waiting lines the next write takes: at least one, at most BATCH_BYTES, and not far past a rotation. */
  private batch(): number {
    const room = Math.min(BATCH_BYTES, Math.max(1, this.rotateBytes - this.size));
    let bytes = 0;
    let count = 0;
    for (const line of this.pending) {
      bytes += Buffer.byteLength(line);
      if (count > 0 && bytes > room) break;
      count++;
    }
    return count;
  }

  private failed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    // The action itself happened; the outage is reported once, not on every action or retry.
    if (this.failure === null) {
      process.stderr.write(
        `baton: cannot write to the audit log ${this.path ?? ''}: ${message}; entries wait in memory and are retried every ${this.retryMs} ms (see /healthz)\n`,
      );
    }
    this.failure = message;
    if (this.closed !== null) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.flushing) this.writes = this.flush();
    }, this.retryMs);
    this.retry.unref();
  }

  /** The file could not be opened (a rotation that renamed the old one but made no new one): open it again. */
  private async reopen(): Promise<void> {
    if (this.path === null) return;
    const file = await open(this.path, 'a+', 0o600);
    try {
      this.size = (await file.stat()).size;
    } catch (err) {
      await file.close();
      throw err;
    }
    this.file = file;
  }

  /** Runs inside a flush, so no write sees a half-rotated file. A failure after the rename leaves the file null: reopen() makes it. */
  private async rotate(): Promise<void> {
    if (this.file === null || this.path === null) return;
    const old = this.file;
    this.file = null;
    await old.close();
    await rename(this.path, `${this.path}.1`);
    this.tornTail = false;
    await this.reopen();
  }
}
