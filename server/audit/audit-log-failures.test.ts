// The audit file when the disk fails it (issue 26): a rotation that renamed audit.log but could
// not create the new one (no inode left) ended the file for good, silently. A real tmpfs with a
// handful of inodes makes that failure (root may mount here, as in disk-full.test.ts); /dev/full
// makes every append fail. What holds now: entries wait in memory and are written, in order,
// once the file can be written again, and health() (for /healthz and /metrics) says so meanwhile.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import { getHealthz } from '../api-handlers/probes.ts';
import { createMetrics } from '../http/metrics.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { AUDIT_FILE, AUDIT_PENDING_BYTES, AuditLog } from './audit-log.ts';
import { apiRequest, testFacade } from '../ops-facade/testing/test-facade.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  vi.restoreAllMocks();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-audit-fail-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A tmpfs at a new dir with room for a few files only. */
function fewInodes(): string {
  const dir = tempDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,nr_inodes=16', 'tmpfs', dir]);
  cleanups.push(() => execFileSync('umount', [dir]));
  return dir;
}

/** Takes every inode left at `dir` with empty files; returns them. */
function useUpInodes(dir: string): string[] {
  const made: string[] = [];
  for (;;) {
    const path = join(dir, `filler-${made.length}`);
    try {
      writeFileSync(path, '');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return made;
      throw err;
    }
    made.push(path);
  }
}

const entry = (n: number): Omit<AuditEntry, 'at'> => ({ who: 'bearer:admin', action: 'kick', target: `lock-${n}`, result: 'ok', detail: null });

function targets(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as AuditEntry).target);
}

async function openLog(dir: string, rotateBytes: number): Promise<AuditLog> {
  const log = await AuditLog.open(dir, rotateBytes, { node: 'a', instance: 'i' }, 20);
  cleanups.push(() => log.close());
  return log;
}

describe('the audit file on a failing disk', () => {
  it('a rotation that cannot create the new file keeps the entries, says so, and writes them in order once an inode is free', async () => {
    const dir = fewInodes();
    const log = await openLog(dir, 1_500);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const fillers = useUpInodes(dir);
    expect(fillers.length).toBeGreaterThan(0);
    // About 150 bytes a line: the file passes 1,500 bytes near entry 10, and the next write rotates.
    for (let i = 1; i <= 20; i++) log.record(entry(i));
    await vi.waitFor(() => expect(log.health().file).toBe('unwritable'));
    expect(log.health().pending).toBeGreaterThan(0);
    expect(String(stderr.mock.calls[0]?.[0])).toContain('cannot write to the audit log');
    log.record(entry(21));
    unlinkSync(fillers[0] as string);
    await vi.waitFor(() => expect(log.health()).toEqual({ file: 'ok', pending: 0, dropped: 0, error: null }));
    log.record(entry(22));
    await log.close();
    const kept = [...targets(join(dir, `${AUDIT_FILE}.1`)), ...targets(join(dir, AUDIT_FILE))];
    expect(kept).toEqual(Array.from({ length: 22 }, (_, i) => `lock-${i + 1}`));
    expect(stderr.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('cannot write'), expect.stringContaining('is written again')]);
  });

  it('shows on /healthz (degraded, audit unwritable, entries waiting) and on /metrics while appends fail', async () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, AUDIT_FILE)); // every write fails with ENOSPC
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log = await openLog(dir, 1_000_000);
    const t = await testFacade({ audit: log });
    const health = async () => (await getHealthz(apiRequest('/healthz'), t.daemon).json()) as Record<string, unknown>;
    expect(await health()).toMatchObject({ status: 'ok', audit: 'ok' });
    log.record(entry(1));
    log.record(entry(2));
    await vi.waitFor(() => expect(log.health().file).toBe('unwritable'));
    expect(await health()).toMatchObject({ status: 'degraded', grants: 'ok', audit: 'unwritable', auditPending: 2 });
    const registry = createMetrics(engineFixture().engine, () => ({ keyed: 0, session: 0 }), {
      role: () => 'active',
      nodeId: 'a',
      instanceId: 'i',
      audit: () => log.health(),
    });
    const text = await registry.metrics();
    expect(text).toContain('\nbaton_audit_unwritable 1\n');
    expect(text).toContain('\nbaton_audit_pending_entries 2\n');
    expect(text).toContain('\nbaton_audit_dropped_entries_total 0\n');
  });

  it('keeps at most 4 MiB waiting for the file: past it the oldest are dropped, and counted', async () => {
    const dir = tempDir();
    symlinkSync('/dev/full', join(dir, AUDIT_FILE));
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const log = await openLog(dir, 1_000_000);
    const detail = 'x'.repeat(1000);
    const count = Math.ceil(AUDIT_PENDING_BYTES / 1000) + 500;
    for (let i = 0; i < count; i++) log.record({ ...entry(i), detail });
    await vi.waitFor(() => expect(log.health().file).toBe('unwritable'));
    const { pending, dropped } = log.health();
    expect(dropped).toBeGreaterThan(0);
    expect(pending + dropped).toBe(count);
    expect(pending * 1000).toBeLessThanOrEqual(AUDIT_PENDING_BYTES);
  });
});
