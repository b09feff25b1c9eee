// A throwaway redis-server on a free loopback port: no persistence (`--save '' --appendonly
// no`), its dir a temp dir, one client thread (the default io-threads 1).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../server/testing/free-ports.ts';
import { cpuOf, type ServerProcess, stopChild, track } from './server-process.ts';

export const REDIS_ARGS = ['--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--bind', '127.0.0.1'];

export interface RedisServer extends ServerProcess {
  readonly port: number;
}

export async function startRedis(): Promise<RedisServer> {
  const [port] = await freePorts(1);
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--dir', dir, ...REDIS_ARGS, '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'inherit'] });
  track(child);
  await awaitListening(child, port as number, dir, 'redis-server');
  return {
    name: 'redis-server', port: port as number, pid: child.pid as number, cpuMs: cpuOf(child.pid as number),
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
