// The harness around each socket-level fuzz test (server/lines/keyed-fuzz.test.ts,
// server/lines/session-fuzz.test.ts, server/lines/raw-bytes-fuzz.test.ts): fast-check's run limits, a real
// daemon on 127.0.0.1 at free ports and raw connections to it, both torn down after each test
// (a test file calls `afterEach(runTeardown)`), and the checks every run ends with: the lock
// table empties and a fresh client is still served.
import fc from 'fast-check';
import { expect } from 'vitest';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { type Daemon, type DaemonOptions, startDaemon } from '../daemon/daemon.ts';
import { type EngineMonitor, eventually, RawConnection } from './fuzz-helpers.ts';

const IO_TIMEOUT_MS = 500;
/** Longer than any wait in the fuzz tests: a lock held this long was leaked, not left to expire. */
export const LONG_LEASE_MS = 60_000;
export const FUZZ_TEST_MS = 60_000;
/** Past this, fast-check stops starting new runs (or shrinking) and reports what it has. */
export const fuzzOptions = (numRuns: number) => ({ numRuns, plugins: [fc.interruptAfterTimeLimit(45_000)] });

export const teardown: Array<() => Promise<void> | void> = [];
/** Runs what the test registered in `teardown`, newest first. */
export async function runTeardown(): Promise<void> {
  for (const fn of teardown.splice(0).reverse()) await fn();
}

export async function daemon(extra: Partial<DaemonOptions> = {}): Promise<Daemon> {
  const d = await startDaemon({
    host: '127.0.0.1',
    lockPort: 0,
    sessionPort: 0,
    httpPort: 0,
    dataDir: null,
    drainMs: 0,
    ioTimeoutMs: IO_TIMEOUT_MS,
    ...extra,
  });
  teardown.push(() => d.shutdown());
  return d;
}

export async function open(port: number): Promise<RawConnection> {
  const c = await RawConnection.open(port);
  teardown.push(() => c.destroy());
  return c;
}

const idle = (engine: LockEngine): boolean => engine.heldCount === 0 && engine.waiterCount === 0 && engine.lockCount === 0;

export async function waitIdle(d: Daemon): Promise<void> {
  await eventually(() => idle(d.engine), 5_000, 'every lock to be released or to expire');
}

/** A fresh client takes and gives back a fresh lock on each protocol. */
export async function serverStillServes(d: Daemon, monitor: EngineMonitor): Promise<void> {
  const key = `fresh/${monitor.grants.size}`;
  const keyed = await open(d.lockAddress.port);
  keyed.write(`A ${key} 60 0\n`);
  await keyed.until(() => keyed.replies().lines.length >= 1, 3_000, 'a grant on a fresh key');
  const token = monitor.latest(key);
  expect(keyed.replies().lines).toEqual([`A ${key} ${token}`]);
  keyed.write(`R ${key} ${token}\n`);
  await keyed.until(() => keyed.replies().lines.length >= 2, 3_000, 'the release');
  expect(keyed.replies().lines[1]).toBe(`R ${key} OK`);
  keyed.destroy();
  const session = await open(d.sessionAddress.port);
  // A lease far past the wait below: only the hang-up can free the lock in time.
  session.write(`ACQUIRE ${key} ${LONG_LEASE_MS}\n`);
  await session.until(() => session.replies().lines.length >= 1, 3_000, 'a session grant on a fresh key');
  expect(session.replies().lines).toEqual([`ACQUIRED ${monitor.latest(key)}`]);
  session.destroy();
  await waitIdle(d);
}

/**
 * The end of every fuzz run: the clients are gone, so every lock must come free, the server
 * must still serve both protocols, and the engine monitor must have seen nothing wrong.
 */
export async function expectCleanEnd(d: Daemon, monitor: EngineMonitor, conns: RawConnection[]): Promise<void> {
  for (const c of conns) c.destroy();
  await waitIdle(d);
  await serverStillServes(d, monitor);
  expect(monitor.problems).toEqual([]);
  await d.shutdown();
}
