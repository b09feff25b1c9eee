// docs/operations.md, "Backing up and restoring the data dir": a backup taken with tar while the
// node serves holds an OLD token ceiling. Started plainly after a restore, the node issues tokens
// again that it issued after the backup (shown here, so the danger is real and the check can
// fail); started once with --token-floor at the high water recorded before the loss, it never
// issues a token it issued before, and later starts need no flag.
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts } from '../../server/testing/free-ports.ts';
import { NodeProcess } from '../../server/testing/node-process.ts';
import { churnTokens } from '../../server/testing/token-churn.ts';

const TOKEN = 'backup-restore-test-admin-token-0123456789';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A single `baton serve` on `dataDir` (fixed free ports, so the test can reach it after restarts). */
async function daemon(dataDir: string, ...extra: string[]): Promise<NodeProcess> {
  const [lock, session, http] = (await freePorts(3)) as [number, number, number];
  const args = ['serve', '--no-console', '--lock-port', `${lock}`, '--session-port', `${session}`, '--http-port', `${http}`, '--data-dir', dataDir, ...extra];
  const node = new NodeProcess({
    id: 'solo',
    priority: 0,
    ports: { lock, session, http, peer: 0, peerListen: 0 },
    dataDir,
    args,
    adminToken: TOKEN,
    proxy: null,
    startTimeoutMs: 15_000,
  });
  cleanups.push(() => node.stop(1_000));
  await node.start();
  return node;
}

async function highWater(node: NodeProcess): Promise<bigint> {
  const reply = await node.api<{ tokenHighWater: string }>('/healthz');
  return BigInt(reply.body.tokenHighWater);
}

function tar(...args: string[]): void {
  const ran = spawnSync('tar', args, { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`tar ${args.join(' ')} failed: ${ran.stderr}`);
}

describe('restoring the data dir from a backup', () => {
  it('a plain start reissues tokens; a first start with --token-floor at the recorded high water never does', { timeout: 90_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-backup-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const live = join(dir, 'baton');
    const backup = join(dir, 'baton-backup.tar');
    const node = await daemon(live);
    const issued = await churnTokens(node.ports.lock, 10, 'before');
    // The backup as docs/operations.md gives it: tar of the data dir while the node serves.
    tar('-C', dir, '-cf', backup, 'baton');
    // After the backup the node goes on past the ceiling the backup holds (a block is 100,000).
    issued.push(...(await churnTokens(node.ports.lock, 120_000, 'after')));
    // What the monitoring last recorded (baton_token_high_water, /healthz) before the disk was lost.
    const recorded = await highWater(node);
    const top = issued.reduce((a, b) => (a > b ? a : b));
    expect(recorded).toBe(top);
    expect(await node.sigterm()).toBe(0);
    const inBackup = spawnSync('tar', ['-tf', backup], { encoding: 'utf8' }).stdout.split('\n');
    expect(inBackup).toEqual(expect.arrayContaining(['baton/token-ceiling', 'baton/audit.log']));

    // The data dir is lost and restored from the backup.
    await rm(live, { recursive: true, force: true });
    tar('-C', dir, '-xf', backup);
    const backupCeiling = BigInt((await readFile(join(live, 'token-ceiling'), 'utf8')).trim());
    expect(backupCeiling).toBeLessThan(top);

    // The danger: a copy of the restored dir started plainly hands out tokens issued before.
    const unsafeDir = join(dir, 'unsafe');
    await cp(live, unsafeDir, { recursive: true });
    const unsafe = await daemon(unsafeDir);
    const reissued = await churnTokens(unsafe.ports.lock, 10, 'unsafe');
    const seen = new Set(issued);
    expect(reissued.filter((t) => seen.has(t)).length).toBeGreaterThan(0);
    expect(await unsafe.sigterm()).toBe(0);

    // The safe procedure: the first start with --token-floor at the recorded high water.
    const restored = await daemon(live, '--token-floor', recorded.toString());
    const first = await churnTokens(restored.ports.lock, 1_000, 'restored');
    expect(first.filter((t) => seen.has(t))).toEqual([]);
    expect(first.every((t) => t > top)).toBe(true);
    expect(await restored.sigterm()).toBe(0);
    // Later starts need no flag: the floor was stored as the ceiling.
    const again = await daemon(live);
    const later = await churnTokens(again.ports.lock, 10, 'later');
    expect(later.every((t) => t > (first.at(-1) as bigint))).toBe(true);
    expect(await again.sigterm()).toBe(0);
    console.log(
      `backup/restore: backup ceiling ${backupCeiling}, ${issued.length} tokens issued up to ${top}; plain start reissued ${reissued.filter((t) => seen.has(t)).length}/10 (from ${reissued[0]}); with --token-floor ${recorded} the first token was ${first[0]}; files in the backup: ${inBackup.filter((f) => f !== '').join(', ')}; in the data dir after a clean stop: ${(await readdir(live)).sort().join(', ')}`,
    );
  });
});
