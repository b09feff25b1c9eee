// Starts the floor (floor-line-server.ts: the bare Node line server) as its own child process,
// through tsx's loader as bin/baton runs Baton, so its CPU is read from /proc exactly as Baton's
// is. Before anything is measured on it, the same client library the benchmark uses takes and
// gives back a lock on each protocol; a floor whose replies the clients do not understand fails
// the run here instead of producing a reference figure of nonsense.
import { type ChildProcess, spawn } from 'node:child_process';
import { KeyedClient, SessionClient } from '../../lib/client/index.ts';
import { firstStdoutLine } from '../../server/testing/start-line.ts';
import { cpuOf, type ServerProcess, stopChild, track } from './server-process.ts';

export interface FloorServer extends ServerProcess {
  readonly keyedPort: number;
  readonly sessionPort: number;
}

export async function startFloor(): Promise<FloorServer> {
  const script = new URL('./floor-line-server.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  track(child);
  try {
    const { keyedPort, sessionPort } = await readPorts(child);
    const pid = child.pid;
    if (pid === undefined) throw new Error('the floor has no pid'); // only a spawn that failed, which readPorts reports first
    await selfCheck(keyedPort, sessionPort);
    return {
      name: 'floor',
      keyedPort,
      sessionPort,
      pid,
      cpuMs: cpuOf(pid),
      stop: () => stopChild(child),
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** The floor's one stdout line, `keyed=<port> session=<port>`; rejects if it exits first. */
async function readPorts(child: ChildProcess): Promise<{ keyedPort: number; sessionPort: number }> {
  const line = await firstStdoutLine(child, 'the floor');
  const m = /^keyed=(\d+) session=(\d+)$/.exec(line);
  if (m === null) throw new Error(`the floor printed ${JSON.stringify(line)}, not its ports`);
  return { keyedPort: Number(m[1]), sessionPort: Number(m[2]) };
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`floor self-check: ${what}`);
}

async function rejects(promise: Promise<unknown>): Promise<boolean> {
  return promise.then(
    () => false,
    () => true,
  );
}

/**
 * Through KeyedClient: a grant, the same key refused while held, an OK release, a STALE one, and
 * a later grant with a larger token. Through SessionClient: a grant, the name refused to a second
 * client while held, a heartbeat answered (a 1 s lease heartbeats every 250 ms; unanswered, the
 * client would give the lease up at 800 ms), and the name free again once close() has resolved
 * (which the benchmark's next pair on the key relies on).
 */
async function selfCheck(keyedPort: number, sessionPort: number): Promise<void> {
  const keyed = new KeyedClient({ addresses: [`127.0.0.1:${keyedPort}`] });
  try {
    const first = await keyed.acquire('floor/check', { lease: 30_000 });
    check(await rejects(keyed.acquire('floor/check', { lease: 30_000 })), 'a held key was granted again');
    check((await first.release()) === true, 'the release was not answered OK');
    check((await keyed.release('floor/check', first.token)) === false, 'a second release of that token was not answered STALE');
    const second = await keyed.acquire('floor/check', { lease: 30_000 });
    check(second.token > first.token, `token ${second.token} after ${first.token}`);
    check((await second.release()) === true, 'the second release was not answered OK');
  } finally {
    await keyed.close();
  }
  const sessions = new SessionClient({ addresses: [`127.0.0.1:${sessionPort}`] });
  const other = new SessionClient({ addresses: [`127.0.0.1:${sessionPort}`] });
  try {
    const lease = await sessions.open('floor/check', { lease: 1_000 });
    check(await rejects(other.open('floor/check', { lease: 1_000 })), 'a held name was granted to another session');
    await new Promise((resolve) => setTimeout(resolve, 400));
    check(lease.stats.heartbeats >= 1 && !lease.signal.aborted, `heartbeats answered: ${lease.stats.heartbeats}, aborted: ${lease.signal.aborted}`);
    await lease.close();
    const again = await sessions.open('floor/check', { lease: 30_000 });
    check(again.token > lease.token, `token ${again.token} after ${lease.token}`);
    await again.close();
  } finally {
    await Promise.all([sessions.close(), other.close()]);
  }
}
