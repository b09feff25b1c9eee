// A disk that fills while the daemon runs: a real, tiny tmpfs as the data dir (root may mount
// here, as in CI), a token block of 4 so that the next ceiling save comes within a few grants.
// Grants that need a new block are refused with storage-unavailable, releases and probes go on,
// a lock freed meanwhile keeps its waiter, and once space is back granting resumes by itself.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type Daemon } from './daemon.ts';
import { LineClient } from '../testing/line-client.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function smallDisk(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
  cleanups.push(() => {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the filesystem at `dir` to the last byte; returns the filler's path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const chunk = Buffer.alloc(4096, 1);
  let written = 0;
  for (;;) {
    try {
      writeFileSync(path, chunk, { flag: written === 0 ? 'w' : 'a' });
      written++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return path;
      throw err;
    }
  }
}

async function health(d: Daemon): Promise<Record<string, unknown>> {
  const r = await fetch(`http://127.0.0.1:${d.httpAddress.port}/healthz`);
  return (await r.json()) as Record<string, unknown>;
}

describe('a data dir whose disk fills up', () => {
  it('refuses grants that need a new block with storage-unavailable, keeps everything else, and grants again once space is back', {
    timeout: 30_000,
  }, async () => {
    const dir = smallDisk();
    const daemon = await startDaemon({ dataDir: dir, lockPort: 0, sessionPort: 0, httpPort: 0, drainMs: 0, tokenBlockSize: 4n });
    cleanups.push(() => daemon.shutdown());
    const c = await LineClient.open(daemon.lockAddress.port);
    const w = await LineClient.open(daemon.lockAddress.port);
    cleanups.push(
      () => c.close(),
      () => w.close(),
    );
    c.send('A held 30 0');
    expect(await c.next()).toBe('A held 1');
    w.send('A held 30 20');
    const filler = fill(dir);
    // Tokens 2 to 4 are in the stored block; the fifth needs a save the full disk refuses.
    c.send('A k2 30 0', 'A k3 30 0', 'A k4 30 0', 'A k5 30 0', 'A k6 30 0');
    expect(await c.take(5)).toEqual([
      'A k2 2',
      'A k3 3',
      'A k4 4',
      'E A k5 storage-unavailable storage unavailable: the token ceiling cannot be written to the data dir',
      'E A k6 storage-unavailable storage unavailable: the token ceiling cannot be written to the data dir',
    ]);
    // The holder can still let go; its waiter is not granted a token that could not be stored.
    c.send('R held 1', 'R k2 2');
    expect(await c.take(2)).toEqual(['R held OK', 'R k2 OK']);
    expect(await health(daemon)).toMatchObject({ status: 'degraded', grants: 'storage-unavailable' });
    // What the dashboard reads (its Totals card shows the reason).
    const stats = await fetch(`http://127.0.0.1:${daemon.httpAddress.port}/api/v1/stats`);
    expect(await stats.json()).toMatchObject({ grants: 'storage-unavailable' });
    expect(w.lines).toEqual([]);
    expect(daemon.engine.lock('held')?.holder).toBeNull();

    unlinkSync(filler);
    // The retry timer (once a second) stores a block and hands the lock to its waiter.
    const granted = await w.next(5_000);
    expect(granted).toMatch(/^A held \d+$/);
    expect(BigInt(granted.split(' ')[2] as string)).toBeGreaterThan(4n);
    c.send('A k7 30 0');
    expect(await c.next()).toMatch(/^A k7 \d+$/);
    expect(await health(daemon)).toMatchObject({ status: 'ok', grants: 'ok' });
  });
});
