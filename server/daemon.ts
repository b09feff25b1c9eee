// The lock daemon: one engine, one token sequence, both wire protocols and the HTTP port,
// created once by `baton serve` (or a test) and never as a side effect of an import.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { LockEngine } from '../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { FileCeilingStore } from '../lib/tokens/file-ceiling-store.ts';
import { EngineDriver } from './engine-driver.ts';
import { FlushScheduler } from './flush-scheduler.ts';
import { createHttpServer, listenHttp } from './http-server.ts';
import { KEYED_GOODBYE, KEYED_REFUSAL, KeyedConnection } from './keyed-connection.ts';
import { LineListener } from './line-listener.ts';
import { createMetrics } from './metrics.ts';
import { performanceClock } from './performance-clock.ts';
import { SESSION_GOODBYE, SESSION_REFUSAL, SessionConnection } from './session-connection.ts';
import { registerDaemonFacade, unregisterDaemonFacade } from './daemon-facade.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';

export interface DaemonOptions {
  host: string;
  lockPort: number;
  sessionPort: number;
  httpPort: number;
  /** Where the token ceiling is kept; null keeps it in memory (tests only: tokens restart). */
  dataDir: string | null;
  ioTimeoutMs: number;
  /** How long /healthz and /metrics keep answering after the protocol listeners close. */
  drainMs: number;
  /** Per protocol. */
  maxConnections: number;
  /** Requests that may wait at once on one keyed connection. */
  maxBacklog: number;
  logger?: Logger;
}

export const DEFAULT_OPTIONS: DaemonOptions = {
  host: '127.0.0.1',
  lockPort: 7070,
  sessionPort: 7071,
  httpPort: 3000,
  dataDir: './data',
  ioTimeoutMs: 5_000,
  drainMs: 2_000,
  maxConnections: 16_384,
  maxBacklog: 10_000,
};

export interface Daemon {
  readonly instanceId: string;
  readonly engine: LockEngine;
  readonly lockAddress: AddressInfo;
  readonly sessionAddress: AddressInfo;
  readonly httpAddress: AddressInfo;
  state(): 'starting' | 'serving' | 'draining';
  /** Drain, stop listeners, close HTTP. Memoized: every caller gets the same promise. */
  shutdown(): Promise<void>;
}

export async function startDaemon(partial: Partial<DaemonOptions> = {}): Promise<Daemon> {
  const opts: DaemonOptions = { ...DEFAULT_OPTIONS, ...partial };
  const log = opts.logger ?? pino({ level: 'silent' });
  const dirLock = opts.dataDir === null ? null : await lockDataDir(opts.dataDir);
  try {
    return await assemble(opts, log, dirLock);
  } catch (err) {
    await dirLock?.release();
    throw err;
  }
}

/** Everything after the data dir is ours; any failure here releases it (see startDaemon). */
async function assemble(opts: DaemonOptions, log: Logger, dirLock: DataDirLock | null): Promise<Daemon> {
  const clock = performanceClock;
  const store = opts.dataDir === null ? new MemoryCeilingStore() : new FileCeilingStore(opts.dataDir);
  const tokens = new BlockTokenSource(store, undefined, (err) => log.error({ err }, 'background token reservation failed; the next block will be reserved with a blocking save'));
  const engine = new LockEngine(clock, tokens);
  const driver = new EngineDriver(engine, clock);
  const flusher = new FlushScheduler();
  const instanceId = randomUUID();
  let state: 'starting' | 'serving' | 'draining' = 'starting';

  const common = {
    host: opts.host, maxConnections: opts.maxConnections, ioTimeoutMs: opts.ioTimeoutMs, clock, flusher,
    afterInput: () => driver.poke(), logger: log,
  };
  const keyed = new LineListener(
    { ...common, port: opts.lockPort, protocol: 'keyed' },
    (socket, ctx) => new KeyedConnection(socket, ctx, engine, { maxBacklog: opts.maxBacklog }),
    KEYED_REFUSAL,
  );
  const sessions = new LineListener({ ...common, port: opts.sessionPort, protocol: 'session' }, (socket, ctx) => new SessionConnection(socket, ctx, engine), SESSION_REFUSAL);
  const registry = createMetrics(engine, { keyed: () => keyed.connections.size, session: () => sessions.connections.size });
  const http: Server = createHttpServer({ instanceId, state: () => state, tokenHighWater: () => engine.tokenHighWater }, registry);

  try {
    // All three settle before anything is judged, so a failure never leaves another one binding later.
    const listens = await Promise.allSettled([keyed.listen(), sessions.listen(), listenHttp(http, opts.host, opts.httpPort)]);
    for (const result of listens) if (result.status === 'rejected') throw result.reason;
    const [lockAddress, sessionAddress, httpAddress] = listens.map((r) => (r as PromiseFulfilledResult<AddressInfo>).value) as [AddressInfo, AddressInfo, AddressInfo];
    state = 'serving';
    let shutdownPromise: Promise<void> | null = null;
    const daemon: Daemon = {
      instanceId, engine, lockAddress, sessionAddress, httpAddress,
      state: () => state,
      shutdown: () => (shutdownPromise ??= drainAndClose()),
    };
    registerDaemonFacade({ instanceId, engine, state: () => state, shutdown: daemon.shutdown, wake: () => driver.poke() });
    log.info({ lock: lockAddress, session: sessionAddress, http: httpAddress, instanceId }, 'baton serving');
    return daemon;

    async function drainAndClose(): Promise<void> {
      state = 'draining';
      log.info({ drainMs: opts.drainMs }, 'draining: closing protocol listeners');
      const keyedClosed = keyed.stopAccepting();
      const sessionsClosed = sessions.stopAccepting();
      keyed.closeAll(() => KEYED_GOODBYE);
      sessions.closeAll(() => SESSION_GOODBYE);
      // Health and metrics stay up through the drain window so orchestrators see "draining".
      await new Promise((resolve) => setTimeout(resolve, opts.drainMs));
      keyed.destroyAll();
      sessions.destroyAll();
      await Promise.all([keyedClosed, sessionsClosed]);
      driver.stop();
      // A background ceiling save stuck on a dead disk must not hold the exit forever.
      await Promise.race([tokens.settled(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      await closeHttp(http);
      unregisterDaemonFacade(instanceId);
      await dirLock?.release();
      log.info('baton stopped');
    }
  } catch (err) {
    keyed.destroyAll();
    sessions.destroyAll();
    driver.stop();
    await Promise.allSettled([keyed.stopAccepting(), sessions.stopAccepting(), closeHttp(http)]);
    throw err;
  }
}

async function closeHttp(http: Server): Promise<void> {
  if (!http.listening) return;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  http.closeIdleConnections();
  const force = setTimeout(() => http.closeAllConnections(), 1_000);
  await closed;
  clearTimeout(force);
}
