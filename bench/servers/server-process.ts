// What every benchmarked server looks like to the sections: a child process on 127.0.0.1 whose
// CPU time is read from /proc, stopped by the script (and killed on the way out if the script
// dies), so no redis-server, etcd or baton outlives a run.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { processCpuMs } from '../baton-process.ts';

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  /** User + system CPU time of the server process so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

/** Registers a child to be SIGKILLed if this process exits before stopping it. */
export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => process.exit(130));
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Waits until `child` listens on `port`. If it cannot start (a missing binary, an exit, a signal,
 * the timeout), it is stopped and its throwaway `dir` removed before the error is thrown.
 */
export async function awaitListening(child: ChildProcess, port: number, dir: string, name: string): Promise<void> {
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  try {
    await waitForPort(port, () => spawnError !== undefined || child.exitCode !== null || child.signalCode !== null);
  } catch (error) {
    if (spawnError === undefined) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    throw spawnError === undefined ? error : new Error(`${name} could not be started: ${spawnError.message}`);
  }
}

/** Polls until something accepts on `port` (or `dead()` says the server exited). */
export async function waitForPort(port: number, dead: () => boolean, timeoutMs = 15_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (dead()) throw new Error(`the server for port ${port} exited during start-up`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (performance.now() > until) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function cpuOf(pid: number): () => number {
  return () => processCpuMs(pid);
}

/** Is `command` on PATH? */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Installs Debian's redis-server and etcd-server with apt-get when their binaries are missing
 * (the rule: the script brings what it compares against).
 */
export function ensureDebianServers(): void {
  if (onPath('redis-server') && onPath('etcd')) return;
  process.stderr.write('bench: redis-server or etcd missing: apt-get install -y redis-server etcd-server\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'redis-server', 'etcd-server']]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed with ${r.status}`);
  }
}
