// A throwaway redis-server on a free loopback port: no persistence (`--save '' --appendonly
// no`), its dir a temp dir, one client thread (the default io-threads 1).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../server/testing/free-ports.ts';
import { awaitListening, cpuOf, type ServerProcess, stopChild, track } from './server-process.ts';

export const REDIS_ARGS = ['--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--bind', '127.0.0.1'];

export interface RedisServer extends ServerProcess {
  readonly port: number;
}

export async function startRedis(): Promise<RedisServer> {
  const [port] = await freePorts(1);
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--dir', dir, ...REDIS_ARGS, '--loglevel', 'warning'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  track(child);
  await awaitListening(child, port as number, dir, 'redis-server');
  return {
    name: 'redis-server',
    port: port as number,
    pid: child.pid as number,
    cpuMs: cpuOf(child.pid as number),
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
