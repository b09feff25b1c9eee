import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import { AUDIT_FILE, AUDIT_MEMORY, AUDIT_MEMORY_BYTES, AuditLog } from './audit-log.ts';

const dirs: string[] = [];
const logs: AuditLog[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-audit-'));
  dirs.push(dir);
  return dir;
}

async function openLog(dir: string | null): Promise<AuditLog> {
  const log = await AuditLog.open(dir);
  logs.push(log);
  return log;
}

function entry(n: number, action: AuditEntry['action'] = 'kick'): Omit<AuditEntry, 'at'> {
  return { who: 'bearer:admin', action, target: `lock-${n}`, result: 'ok', detail: null };
}

async function fileLines(dir: string): Promise<AuditEntry[]> {
  const text = await readFile(join(dir, AUDIT_FILE), 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEntry);
}

afterEach(async () => {
  await Promise.all(logs.splice(0).map((l) => l.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  vi.restoreAllMocks();
});

describe('AuditLog in memory', () => {
  it('fills in the time of each entry', async () => {
    const log = await openLog(null);
    const before = Date.now();
    log.record(entry(1));
    const [got] = log.recent(10);
    expect(got?.at).toBeGreaterThanOrEqual(before);
    expect(got?.at).toBeLessThanOrEqual(Date.now());
  });

  it('returns the most recent entries, newest last', async () => {
    const log = await openLog(null);
    for (let i = 1; i <= 5; i++) log.record(entry(i));
    expect(log.recent(2).map((e) => e.target)).toEqual(['lock-4', 'lock-5']);
  });

  it(`keeps only the last ${AUDIT_MEMORY} entries`, async () => {
    const log = await openLog(null);
    for (let i = 1; i <= AUDIT_MEMORY + 5; i++) log.record(entry(i));
    const all = log.recent(AUDIT_MEMORY * 2);
    expect(all).toHaveLength(AUDIT_MEMORY);
    expect(all[0]?.target).toBe('lock-6');
  });

  it('tells subscribers at once, in the same call', async () => {
    const log = await openLog(null);
    const seen: string[] = [];
    log.subscribe((e) => seen.push(e.target));
    log.record(entry(1));
    expect(seen).toEqual(['lock-1']);
  });

  it('stops telling a subscriber that unsubscribed', async () => {
    const log = await openLog(null);
    const seen: string[] = [];
    const stop = log.subscribe((e) => seen.push(e.target));
    stop();
    log.record(entry(1));
    expect(seen).toEqual([]);
  });

  it('keeps recording when a subscriber throws', async () => {
    const log = await openLog(null);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    log.subscribe(() => {
      throw new Error('broken listener');
    });
    expect(() => log.record(entry(1))).not.toThrow();
    expect(log.recent(1)).toHaveLength(1);
  });
});

describe('AuditLog on disk', () => {
  it('moves a full log to audit.log.1 and goes on in a fresh file, losing no entry', async () => {
    const dir = await tempDir();
    const log = await AuditLog.open(dir, 1_000); // a tiny limit: rotates every few entries
    logs.push(log);
    for (let i = 0; i < 25; i++) log.record(entry(i));
    await log.close();
    const current = await fileLines(dir);
    const rotated = (await readFile(join(dir, `${AUDIT_FILE}.1`), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as AuditEntry);
    expect(current.length).toBeGreaterThan(0);
    expect(current.length).toBeLessThan(25);
    // Only the last two files are kept; what is in them is the newest entries, in order.
    const kept = [...rotated, ...current].map((e) => e.target);
    expect(kept).toEqual(Array.from({ length: 25 }, (_, i) => `lock-${i}`).slice(25 - kept.length));
  });

  it('keeps at most two files on disk, each at most the rotation size plus one write, however much is recorded', async () => {
    const dir = await tempDir();
    const log = await AuditLog.open(dir, 4_000);
    logs.push(log);
    for (let i = 0; i < 2_000; i++) {
      log.record(entry(i));
      if (i % 100 === 99) await new Promise((r) => setTimeout(r, 0));
    }
    await log.close();
    const files = (await readdir(dir)).sort();
    expect(files).toEqual([AUDIT_FILE, `${AUDIT_FILE}.1`]);
    for (const f of files) expect((await stat(join(dir, f))).size).toBeLessThanOrEqual(4_000 + 64 * 1024);
    // And what they hold is the newest entries, in order, read back at the next start.
    const again = await openLog(dir);
    const back = again.recent(AUDIT_MEMORY).map((e) => e.target);
    expect(back.at(-1)).toBe('lock-1999');
    expect(back).toEqual(Array.from({ length: back.length }, (_, i) => `lock-${2_000 - back.length + i}`));
  });

  it('appends one JSON line per entry, in order', async () => {
    const dir = await tempDir();
    const log = await openLog(dir);
    for (let i = 1; i <= 20; i++) log.record(entry(i));
    await log.close();
    expect((await fileLines(dir)).map((e) => e.target)).toEqual(Array.from({ length: 20 }, (_, i) => `lock-${i + 1}`));
  });

  it('shows the entries of an earlier run after a restart', async () => {
    const dir = await tempDir();
    const first = await openLog(dir);
    first.record(entry(1, 'force-release'));
    first.record(entry(2, 'handoff'));
    await first.close();
    const second = await openLog(dir);
    expect(second.recent(10).map((e) => [e.action, e.target])).toEqual([
      ['force-release', 'lock-1'],
      ['handoff', 'lock-2'],
    ]);
  });

  it(`reloads the newest ${AUDIT_MEMORY} entries of a longer file`, async () => {
    const dir = await tempDir();
    const count = AUDIT_MEMORY + 500;
    const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ at: i, ...entry(i) })).join('\n');
    await writeFile(join(dir, AUDIT_FILE), `${lines}\n`);
    const log = await openLog(dir);
    const got = log.recent(count);
    expect(got).toHaveLength(AUDIT_MEMORY);
    expect(got[0]?.target).toBe('lock-500');
  });

  it('reloads from the rotated file too when the current one holds fewer than the retention, in order', async () => {
    const dir = await tempDir();
    const line = (i: number) => JSON.stringify({ at: i, ...entry(i) });
    await writeFile(join(dir, `${AUDIT_FILE}.1`), `${Array.from({ length: 300 }, (_, i) => line(i)).join('\n')}\n`);
    await writeFile(join(dir, AUDIT_FILE), `${Array.from({ length: 100 }, (_, i) => line(300 + i)).join('\n')}\n`);
    const log = await openLog(dir);
    expect(log.recent(10_000).map((e) => e.target)).toEqual(Array.from({ length: 400 }, (_, i) => `lock-${i}`));
  });

  it('keeps every field within its bound in memory (the byte ceiling holds) and the whole entry in the file', async () => {
    const dir = await tempDir();
    const log = await openLog(dir);
    const detail = 'd'.repeat(100_000);
    log.record({ ...entry(1), detail, who: 'w'.repeat(10_000), target: 't'.repeat(10_000) });
    const [kept] = log.recent(1);
    expect(kept?.detail).toHaveLength(2_048);
    expect(kept?.who).toHaveLength(256);
    expect(kept?.target).toHaveLength(1_024);
    await log.close();
    expect((await fileLines(dir))[0]?.detail).toBe(detail);
  });

  it(`stays under ${AUDIT_MEMORY_BYTES} bytes of entries whatever they hold`, async () => {
    const log = await openLog(null);
    const big = { who: 'w'.repeat(300), target: 't'.repeat(2000), result: 'r'.repeat(100), detail: 'd'.repeat(3000) };
    for (let i = 0; i < AUDIT_MEMORY; i++) log.record({ ...entry(i), ...big });
    const { entries, bytes } = log.retained();
    expect(bytes).toBeLessThanOrEqual(AUDIT_MEMORY_BYTES);
    // The byte ceiling binds before the count does for entries this long.
    expect(entries).toBeLessThan(AUDIT_MEMORY);
    expect(entries).toBeGreaterThan(AUDIT_MEMORY_BYTES / 9_000);
  });

  it('skips a torn last line and keeps the next entry on a line of its own', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, AUDIT_FILE), `${JSON.stringify({ at: 1, ...entry(1) })}\n{"at":2,"who":"bea`);
    const log = await openLog(dir);
    expect(log.recent(10).map((e) => e.target)).toEqual(['lock-1']);
    log.record(entry(3));
    await log.close();
    const reopened = await openLog(dir);
    expect(reopened.recent(10).map((e) => e.target)).toEqual(['lock-1', 'lock-3']);
  });

  it('creates the data dir when it is missing', async () => {
    const dir = join(await tempDir(), 'nested');
    const log = await openLog(dir);
    log.record(entry(1));
    await log.close();
    expect(await fileLines(dir)).toHaveLength(1);
  });

  it('reports a failing write once on stderr (not on each retry) and does not throw into the caller', async () => {
    const dir = await tempDir();
    // Every write to /dev/full fails with ENOSPC: a full disk, on demand.
    await symlink('/dev/full', join(dir, AUDIT_FILE));
    const log = await openLog(dir);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(() => {
      log.record(entry(1));
      log.record(entry(2));
    }).not.toThrow();
    await log.close();
    expect(stderr).toHaveBeenCalledTimes(1);
    expect(String(stderr.mock.calls[0]?.[0])).toContain('cannot write to the audit log');
    expect(log.recent(10)).toHaveLength(2);
  });

  it('can be closed twice', async () => {
    const log = await openLog(await tempDir());
    await log.close();
    await expect(log.close()).resolves.toBeUndefined();
  });
});

describe('AuditLog in a cluster', () => {
  const peerEntry = (n: number, at = 1_700_000_000_000 + n): AuditEntry => ({
    at,
    who: 'bearer:admin',
    action: 'force-release',
    target: `peer-lock-${n}`,
    result: 'ok',
    detail: null,
    node: 'b',
    id: `b/i-b/${n}`,
  });

  it('stamps each entry it records with its node and a cluster-unique id', async () => {
    const log = await AuditLog.open(null, undefined, { node: 'a', instance: 'i-a' });
    logs.push(log);
    log.record(entry(1));
    log.record(entry(2));
    expect(log.recent(2).map((e) => [e.node, e.id])).toEqual([
      ['a', 'a/i-a/1'],
      ['a', 'a/i-a/2'],
    ]);
  });

  it('keeps, writes and shows a peer’s entries once, however often they are replicated', async () => {
    const dir = await tempDir();
    const log = await AuditLog.open(dir, undefined, { node: 'a', instance: 'i-a' });
    logs.push(log);
    const shown: AuditEntry[] = [];
    log.subscribe((e) => shown.push(e));
    expect(log.mergeRemote([peerEntry(1), peerEntry(2)])).toHaveLength(2);
    expect(log.mergeRemote([peerEntry(2), peerEntry(1)])).toEqual([]);
    expect(shown.map((e) => e.id)).toEqual(['b/i-b/1', 'b/i-b/2']);
    expect(log.recent(10).map((e) => e.id)).toEqual(['b/i-b/1', 'b/i-b/2']);
    await log.close();
    expect((await fileLines(dir)).map((e) => e.id)).toEqual(['b/i-b/1', 'b/i-b/2']);
  });

  it('reads back node and id after a restart, so a replicated entry is still not kept twice', async () => {
    const dir = await tempDir();
    const first = await AuditLog.open(dir, undefined, { node: 'a', instance: 'i-1' });
    first.mergeRemote([peerEntry(7)]);
    first.record(entry(1, 'restore'));
    await first.close();
    const again = await openLog(dir);
    expect(again.recent(10).map((e) => [e.node, e.action])).toEqual([
      ['b', 'force-release'],
      ['a', 'restore'],
    ]);
    expect(again.mergeRemote([peerEntry(7)])).toEqual([]);
  });
});
