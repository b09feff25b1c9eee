// `baton serve` at the edges of its data dir, as a real process: the last u64 token (the next
// grant is refused with tokens-exhausted, everything else goes on, and a restart does the same:
// no exit 70), a data dir that cannot be written (refused at start, exit 73: made immutable with
// chattr +i, since root ignores permission bits), and a data dir that lost its ceiling files
// or has one that does not hold a number (refused, exit 65, unless --token-floor names the floor).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TOKEN } from '../../lib/tokens/token-source.ts';
import { LineClient, eventually } from '../testing/line-client.ts';
import { BATON_BIN, serveArgs } from '../testing/serve-args.ts';

const BATON = BATON_BIN;

interface Running {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exit: number | null | undefined;
  lock: number;
  session: number;
  http: number;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanups.splice(0).reverse()) fn();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-data-edges-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function spawnBaton(dataDir: string, ...extra: string[]): Running {
  const child = spawn(process.execPath, [BATON, ...serveArgs(dataDir), '--no-console', '--drain', '0ms', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, BATON_ADMIN_TOKEN: undefined, BATON_READ_TOKEN: undefined },
  });
  const run: Running = { child, stdout: '', stderr: '', exit: undefined, lock: 0, session: 0, http: 0 };
  child.stdout?.setEncoding('utf8').on('data', (t: string) => (run.stdout += t));
  child.stderr?.setEncoding('utf8').on('data', (t: string) => (run.stderr += t));
  child.once('exit', (code) => (run.exit = code));
  cleanups.push(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  });
  return run;
}

async function serving(dataDir: string, ...extra: string[]): Promise<Running> {
  const run = spawnBaton(dataDir, ...extra);
  await eventually(() => /baton serving /.test(run.stdout) || run.exit !== undefined, 20_000, 'the serving line');
  const m = /lock=127\.0\.0\.1:(\d+) session=127\.0\.0\.1:(\d+) http=127\.0\.0\.1:(\d+)/.exec(run.stdout);
  if (m === null) throw new Error(`baton did not serve (exit ${run.exit}): ${run.stderr}`);
  [run.lock, run.session, run.http] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return run;
}

async function exited(run: Running, ms = 20_000): Promise<number | null> {
  await eventually(() => run.exit !== undefined, ms, `baton to exit; stderr: ${run.stderr}`);
  return run.exit ?? null;
}

async function stop(run: Running): Promise<void> {
  run.child.kill('SIGTERM');
  expect(await exited(run)).toBe(0);
}

async function keyed(run: Running): Promise<LineClient> {
  const c = await LineClient.open(run.lock);
  cleanups.push(() => c.close());
  return c;
}

async function get(run: Running, path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${run.http}${path}`);
  return { status: r.status, text: await r.text() };
}

describe('the last u64 token', () => {
  it('is issued, then every A gets tokens-exhausted, releases, sessions and probes go on, and a restart does the same without exiting', {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'token-ceiling'), `${MAX_TOKEN - 1n}\n`);
    const first = await serving(dir);
    const c = await keyed(first);
    c.send('A last 30 0');
    expect(await c.next()).toBe(`A last ${MAX_TOKEN}`);
    c.send('A more 30 0', `R last ${MAX_TOKEN}`, 'A more 30 0');
    expect(await c.take(3)).toEqual([
      'E A more tokens-exhausted fencing tokens exhausted: this node can grant no more locks',
      'R last OK',
      'E A more tokens-exhausted fencing tokens exhausted: this node can grant no more locks',
    ]);
    const s = await LineClient.open(first.session);
    cleanups.push(() => s.close());
    s.send('ACQUIRE sess 10000');
    expect(await s.closedWith()).toEqual(['ERROR 0x07 fencing tokens exhausted: this node can grant no more locks']);
    const health = await get(first, '/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'degraded', grants: 'tokens-exhausted', tokenHighWater: MAX_TOKEN.toString() });
    expect((await get(first, '/readyz')).status).toBe(503);
    const metrics = await get(first, '/metrics');
    expect(metrics.text).toContain('baton_grants_refused{reason="tokens-exhausted"} 1');
    expect(metrics.text).toContain('baton_grants_refused{reason="storage-unavailable"} 0');
    expect(first.exit).toBeUndefined();
    await stop(first);

    const again = await serving(dir);
    const c2 = await keyed(again);
    c2.send('A after-restart 30 0');
    expect(await c2.next()).toBe('E A after-restart tokens-exhausted fencing tokens exhausted: this node can grant no more locks');
    expect(JSON.parse((await get(again, '/healthz')).text)).toMatchObject({ grants: 'tokens-exhausted' });
    expect(again.stderr).toContain('fencing tokens exhausted');
    expect(again.exit).toBeUndefined();
    await stop(again);
  });
});

describe('a data dir that cannot be written', () => {
  it('is refused at start with exit 73 and a message naming the dir (an immutable dir, which root cannot write either)', { timeout: 60_000 }, async () => {
    const dir = tempDir();
    // A dir that served once: its files exist and can be rewritten in place, but nothing in it
    // can be created or renamed (the ceiling store's rename), which is what chattr +i does.
    const once = await serving(dir);
    await stop(once);
    // As a run killed with -9 leaves it: the pid file can be rewritten in place, so taking the
    // dir succeeds, and only the ceiling store's way of writing (a new file, renamed) fails.
    writeFileSync(join(dir, 'baton.pid'), '1\n');
    execFileSync('chattr', ['+i', dir]);
    cleanups.push(() => execFileSync('chattr', ['-i', dir]));
    expect(() => writeFileSync(join(dir, 'probe'), 'x')).toThrow(/EPERM|EACCES/);
    const run = spawnBaton(dir);
    expect(await exited(run)).toBe(73);
    expect(run.stderr).toContain(`baton: data dir ${dir} cannot be written the way the token ceiling is stored`);
    expect(run.stdout).not.toContain('baton serving');
  });
});

/** A data dir that has served once and issued token 1 (its ceiling files written), with the node stopped. */
async function usedDataDir(): Promise<string> {
  const dir = tempDir();
  const once = await serving(dir);
  const c = await keyed(once);
  c.send('A before 30 0');
  expect(await c.next()).toBe('A before 1');
  await stop(once);
  return dir;
}

describe('a data dir that lost both ceiling files', () => {
  it('is refused with exit 65 unless --token-floor names the floor, and then tokens go on above it', { timeout: 60_000 }, async () => {
    const dir = await usedDataDir();
    for (const f of readdirSync(dir)) if (f.startsWith('token-ceiling')) unlinkSync(join(dir, f));

    const refused = spawnBaton(dir);
    expect(await exited(refused)).toBe(65);
    expect(refused.stderr).toContain('both token ceiling files (token-ceiling, token-ceiling.ahead) are gone');
    expect(refused.stderr).toContain('--token-floor N');

    const bad = spawnBaton(dir, '--token-floor', 'lots');
    expect(await exited(bad)).toBe(2);
    expect(bad.stderr).toContain("option '--token-floor <n>' argument 'lots' is invalid");

    const recovered = await serving(dir, '--token-floor', '100000');
    const c2 = await keyed(recovered);
    c2.send('A after 30 0');
    expect(await c2.next()).toBe('A after 100001');
    await stop(recovered);
    // Once recovered the dir has its ceiling again: a plain start works and goes on above it.
    const plain = await serving(dir);
    const c3 = await keyed(plain);
    c3.send('A later 30 0');
    const line = await c3.next();
    expect(BigInt(line.split(' ')[2] as string)).toBeGreaterThan(100_001n);
    await stop(plain);
  });

  it('is refused with exit 65 and one line naming the file when a ceiling file does not hold a number, and starts again above --token-floor', {
    timeout: 60_000,
  }, async () => {
    const dir = await usedDataDir();
    const ceiling = join(dir, 'token-ceiling');
    const ahead = join(dir, 'token-ceiling.ahead');
    // Text, and a number past u64 (as corrupt as text), in either file.
    for (const [file, text] of [
      [ceiling, 'garbage\n'],
      [ahead, '18446744073709551616\n'],
    ] as const) {
      const kept = existsSync(file) ? readFileSync(file) : null;
      writeFileSync(file, text);
      const refused = spawnBaton(dir);
      expect(await exited(refused), file).toBe(65);
      const said = refused.stderr.split('\n').filter((l) => l.startsWith('baton: '));
      expect(said, refused.stderr).toHaveLength(1);
      expect(said[0]).toContain(`corrupt token ceiling in ${file}: ${JSON.stringify(text.trim())}`);
      expect(said[0]).toContain('move it aside and start once with --token-floor N');
      expect(refused.stdout).not.toContain('baton serving');
      if (kept === null) unlinkSync(file);
      else writeFileSync(file, kept);
    }
    // What the message says to do: move the file aside, start once with a floor.
    writeFileSync(ceiling, 'garbage\n');
    renameSync(ceiling, join(dir, 'token-ceiling.corrupt'));
    const recovered = await serving(dir, '--token-floor', '100000');
    const c2 = await keyed(recovered);
    c2.send('A after 30 0');
    expect(await c2.next()).toBe('A after 100001');
    await stop(recovered);
  });

  it('a new, empty data dir starts without a floor and stores one', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const run = await serving(dir);
    expect(readdirSync(dir)).toContain('token-ceiling');
    await stop(run);
  });
});
