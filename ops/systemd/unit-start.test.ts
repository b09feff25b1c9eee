// `baton serve` started the way baton.service starts it: the argv systemd builds from ExecStart
// and baton.env, the unit's Environment= and the env file's variables in the environment, the
// working directory as the state directory (a temp dir here), a one-node cluster.json on free
// ports. It must serve /healthz and a lock, then stop with exit 0 on SIGTERM well within
// TimeoutStopSec. Two things differ from a real host: --no-console (the dashboard's build is made
// after the Vitest stage of `npm test`) and LimitNOFILE (raising the hard limit needs a privilege
// this sandbox does not have; unit.test.ts checks the figure against the daemon's own budget).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyedClient } from '../../lib/client/index.ts';
import { freePorts } from '../../server/testing/free-ports.ts';
import { BATON_BIN } from '../../server/testing/serve-args.ts';
import { envValues } from './unit-checks.ts';
import { directive, execArgv, parseTimeSpan, readEnv, readUnit } from './unit-file.ts';

const TOKEN = 'unit-start-test-admin-token-0123456789';
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** The unit's own Environment= lines as variables ("A=1 B=2" on one line is two). */
function unitEnvironment(values: string[]): Record<string, string> {
  return Object.fromEntries(values.flatMap((v) => v.split(/\s+/)).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** ExecStart's argv as systemd builds it from `env`, with the state directory put at `stateDir`. */
function argvFor(env: Map<string, string>, stateDir: string): string[] {
  const unit = readUnit();
  const exec = (directive(unit, 'Service.ExecStart') ?? '').replace(`/var/lib/${directive(unit, 'Service.StateDirectory')}`, stateDir);
  return execArgv(exec, env);
}

describe('baton serve as baton.service runs it', () => {
  it('refuses to start with exit 2, one the unit does not restart, while baton.env has no admin token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-unit-start-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const env = envValues(readEnv());
    expect(env.get('BATON_ADMIN_TOKEN')).toBe('');
    const [, ...args] = argvFor(env, join(dir, 'state'));
    const child: ChildProcess = spawn(process.execPath, [BATON_BIN, ...args], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...Object.fromEntries(env) },
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    expect(await exited(child)).toEqual({ code: 2, signal: null });
    expect(stderr).toMatch(/--config needs the shared admin token/);
    expect((directive(readUnit(), 'Service.RestartPreventExitStatus') ?? '').split(' ')).toContain('2');
  });

  it('serves /healthz and a lock, then stops with exit 0 on SIGTERM within TimeoutStopSec', { timeout: 60_000 }, async () => {
    const unit = readUnit();
    const dir = await mkdtemp(join(tmpdir(), 'baton-unit-start-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const [lockPort, sessionPort, peerPort, httpPort] = (await freePorts(4)) as [number, number, number, number];
    const config = join(dir, 'cluster.json');
    await writeFile(config, JSON.stringify({ peers: [{ id: 'a', host: '127.0.0.1', lockPort, sessionPort, peerPort, httpPort }] }));
    const env = envValues(readEnv());
    env.set('BATON_ADMIN_TOKEN', TOKEN);
    env.set('BATON_CONFIG', config);
    env.set('BATON_NODE', 'a');
    env.set('BATON_EXTRA_FLAGS', `${env.get('BATON_EXTRA_FLAGS') ?? ''} --no-console`);
    const stateDir = join(dir, 'state');
    const [bin, ...args] = argvFor(env, stateDir);
    expect(bin).toBe('/opt/baton/bin/baton');
    expect(args.slice(0, 5)).toEqual(['serve', '--config', config, '--node', 'a']);

    await mkdir(stateDir, { mode: 0o750 });
    const child: ChildProcess = spawn(process.execPath, [BATON_BIN, ...args], {
      cwd: stateDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      // On top of this process's environment (systemd's is smaller; every BATON_ variable is set by the file anyway).
      env: { ...process.env, ...unitEnvironment(unit.directives.get('Service.Environment') ?? []), ...Object.fromEntries(env) },
    });
    const done = exited(child);
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await done;
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr?.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    const deadline = performance.now() + parseTimeSpan(directive(unit, 'Service.TimeoutStartSec') ?? '90s');
    while (!/^baton serving /m.test(stdout)) {
      if (child.exitCode !== null) throw new Error(`baton exited ${child.exitCode} before serving:\n${stderr}`);
      if (performance.now() > deadline) throw new Error(`no serving line within TimeoutStartSec:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stdout).toContain(`data-dir=${stateDir}`);

    const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', state: 'serving' });
    const keyed = new KeyedClient({ addresses: [`127.0.0.1:${lockPort}`] });
    cleanups.push(() => keyed.close());
    const grant = await keyed.acquire('unit-start', { lease: 5_000, wait: 10_000 });
    expect(grant.token).toBeGreaterThan(0n);
    expect(await keyed.release('unit-start', grant.token)).toBe(true);
    await keyed.close();

    const stopAt = performance.now();
    child.kill('SIGTERM');
    const timeoutMs = parseTimeSpan(directive(unit, 'Service.TimeoutStopSec') ?? '0');
    const result = await Promise.race([done, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs))]);
    const stopMs = performance.now() - stopAt;
    console.log(`baton.service start test: stopped ${Math.round(stopMs)} ms after SIGTERM (TimeoutStopSec ${timeoutMs} ms)`);
    expect(result).toEqual({ code: 0, signal: null });
    expect(stderr).toMatch(/"msg":"baton stopped"/);
  });
});
