// The lock daemon: one engine, one token sequence, both wire protocols and the HTTP port,
// created once by `baton serve` (or a test) and never as a side effect of an import.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { DEFAULT_DETACH_LIMITS, LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, type CeilingStore, MemoryCeilingStore, type ReservingTokenSource } from '../../lib/tokens/token-source.ts';
import { type BlockSupplier, SuppliedTokenSource } from '../../lib/tokens/supplied-token-source.ts';
import { suppliedTokens } from './supplied-tokens.ts';
import { FileCeilingStore } from '../../lib/tokens/file-ceiling-store.ts';
import { clusterSlot, SINGLE_SLOT } from '../../lib/tokens/token-slots.ts';
import { EngineDriver } from './engine-driver.ts';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { createHttpServer, listenHttp } from '../http/http-server.ts';
import { KEYED_REFUSAL, KeyedConnection } from '../lines/keyed-connection.ts';
import { LineListener } from '../lines/line-listener.ts';
import { createMetrics } from '../http/metrics.ts';
import { performanceClock } from './performance-clock.ts';
import { SESSION_REFUSAL, SessionConnection } from '../lines/session-connection.ts';
import { registerDaemonFacade, unregisterDaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { createConsoleServer, type ConsoleServer } from '../http/console-server.ts';
import { warmUpConsole } from '../http/console-warm-up.ts';
import { createOpsServices } from '../ops-facade/ops-services.ts';
import type { DaemonState } from '../../lib/ops-api/api-types.ts';
import { formatAddress } from '../../lib/protocol/address-text.ts';
import { SerialCeilingStore } from '../../lib/tokens/serial-ceiling-store.ts';
import { ClusterNode } from '../cluster/cluster-node.ts';
import type { EtcdCoordination } from '../coordination/etcd-coordination.ts';
import { EtcdReplyGating } from '../coordination/etcd-reply-gating.ts';
import type { EtcdTokenBlocks } from '../coordination/etcd-token-blocks.ts';
import type { NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import { localLockOps } from '../admin-ops/admin-ops.ts';
import { auditForwardedOp } from '../admin-ops/forwarded-op-audit.ts';
import { CeilingFanOut } from '../cluster/ceiling-fan-out.ts';
import { ClientSteering } from '../lines/client-steering.ts';
import { GrantRetry } from './grant-retry.ts';
import { createOpsFacade } from '../ops-facade/ops-facade.ts';
import { HOLD } from '../lines/routing.ts';
import { listenerLimits } from '../lines/open-files.ts';
import type { ClusterOptions } from '../../lib/cluster/cluster-config.ts';
import { prepareCeiling, traces, unwritable } from './data-dir-check.ts';

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
  /** `--max-park`: longest a resumable session claim waits between connections for its client's RESUME, whatever its lease. */
  maxParkMs: number;
  /** `--max-parked`: resumable claims that may wait between connections at once; past it a reset ends a claim as a close does. */
  maxParked: number;
  /**
   * What the HTTP port serves: 'next' is the operator console (dashboard and ops API, a
   * custom Next.js server; needs a production build, or `consoleDev`); 'probes' the probes,
   * /metrics and the JSON ops API without the dashboard (`--no-console`, and most tests).
   */
  console: 'next' | 'probes';
  /** Run the console with Next's dev server (hot reload) instead of the production build. */
  consoleDev: boolean;
  /** This node's id (the cluster config names nodes; a single node defaults to "local"). */
  nodeId: string;
  /**
   * Run as one node of a cluster (`--config`, `--node`); null runs a cluster of one. The
   * node's host and ports then come from its config entry (the port options above are ignored).
   */
  cluster: ClusterOptions | null;
  /** Needed for every mutation (force-release, kick, handoff); null generates a random one. */
  adminToken: string | null;
  /** When set, reads need it (or the admin token); otherwise reads are open on loopback. */
  readToken: string | null;
  /**
   * The open-file limit the connection budget is sized from (server/lines/open-files.ts); unset reads
   * the process's own, null means none. Tests pin it so they do not depend on `ulimit -n`.
   */
  openFileLimit?: number | null;
  /**
   * `--token-floor`: every token issued is above it. Needed to start on a data dir that was used
   * before but lost both ceiling files; otherwise it only raises the stored ceiling. null: none.
   */
  tokenFloor?: bigint | null;
  /** Tokens reserved per ceiling save (tests cross block ends with a small one); 100,000 if not given. */
  tokenBlockSize?: bigint;
  /**
   * The etcd mode (issue 32): token blocks come only from this supplier (EtcdTokenBlocks,
   * server/coordination/etcd-token-blocks.ts), not from this node's slot; tokenBlockSize then sizes the etcd blocks (tests)
   * unless the etcd options name a size (`--etcd-token-block`).
   */
  tokenBlocks?: BlockSupplier;
  logger?: Logger;
}

/** At a stop, how long a background token ceiling save may hold the exit (a dead disk must not hold it forever). */
export const STOP_CEILING_SAVE_WAIT_MS = 2_000;
/** At a stop, how long open HTTP connections (event streams) get before they are closed. */
export const STOP_HTTP_GRACE_MS = 1_000;

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
  maxParkMs: DEFAULT_DETACH_LIMITS.maxMs,
  maxParked: DEFAULT_DETACH_LIMITS.maxClaims,
  console: 'probes',
  consoleDev: false,
  nodeId: 'local',
  cluster: null,
  adminToken: null,
  readToken: null,
};

export interface Daemon {
  readonly instanceId: string;
  readonly engine: LockEngine;
  readonly lockAddress: AddressInfo;
  readonly sessionAddress: AddressInfo;
  readonly httpAddress: AddressInfo;
  /** The admin token in force (generated when none was given: `baton serve` prints it once). */
  readonly adminToken: string;
  state(): DaemonState;
  /** Drain, stop listeners, close HTTP. Memoized: every caller gets the same promise. */
  shutdown(): Promise<void>;
}

export async function startDaemon(partial: Partial<DaemonOptions> = {}): Promise<Daemon> {
  const opts: DaemonOptions = { ...DEFAULT_OPTIONS, ...partial };
  const log = opts.logger ?? pino({ level: 'silent' });
  // What earlier runs left, read before this one writes its own pid file and audit log.
  const earlier = opts.dataDir === null ? [] : traces(opts.dataDir);
  const dirLock =
    opts.dataDir === null
      ? null
      : await lockDataDir(opts.dataDir).catch((err: unknown) => {
          throw unwritable(opts.dataDir as string, err);
        });
  try {
    return await assemble(opts, log, dirLock, earlier);
  } catch (err) {
    await dirLock?.release();
    throw err;
  }
}

/** Everything after the data dir is ours; any failure here releases it (see startDaemon). */
async function assemble(opts: DaemonOptions, log: Logger, dirLock: DataDirLock | null, earlier: string[]): Promise<Daemon> {
  const clock = performanceClock;
  let inner: CeilingStore;
  if (opts.dataDir === null) inner = new MemoryCeilingStore(opts.tokenFloor ?? 0n);
  else {
    const file = new FileCeilingStore(opts.dataDir);
    // Refuses (StartRefused) before anything binds: an unwritable dir, a lost ceiling.
    const note = prepareCeiling(file, opts.dataDir, earlier, opts.tokenFloor ?? null);
    if (note !== null) log.warn({ dataDir: opts.dataDir }, note);
    inner = file;
  }
  const durable = new SerialCeilingStore(inner);
  // In a cluster, a block is also stored by every connected standby before a token is issued from it.
  const fanOut = opts.cluster === null ? null : new CeilingFanOut(durable);
  let clusterNode: ClusterNode | null = null;
  const store: CeilingStore = fanOut ?? durable;
  const etcd = opts.cluster?.etcd;
  // The etcd mode's reply rule: while this node is active, each turn's replies wait for the in-sync standbys (built with the cluster node below).
  let gating: EtcdReplyGating | null = null;
  // The etcd mode (`--coordination etcd`): built here only in that mode; the node starts and stops it.
  // Loaded only in that mode: the etcd client (gRPC) is a second of start-up on a busy host, and
  // every other command and mode (`baton run` too: it shares this module graph) would pay it.
  const coordination: EtcdCoordination | undefined =
    etcd === undefined || opts.cluster === null
      ? undefined
      : new (await import('../coordination/etcd-coordination.ts')).EtcdCoordination({
          etcd,
          nodeId: opts.cluster.nodeId,
          priority: opts.cluster.config.peers.findIndex((p) => p.id === opts.cluster?.nodeId),
          now: () => clock.now(),
          logger: log,
          // The reply gate's keeper stores the in-sync set (etcd-reply-gating.ts).
          inSyncKeptElsewhere: true,
          // A handoff narrows the set through that keeper too (etcd-handoff.ts).
          inSyncKeeper: () => gating?.keeper ?? null,
          repliesWaiting: () => gating?.gate.waiting ?? 0,
          // Each endpoint probed on its own for the console, /readyz and /metrics (endpoint-health.ts).
          endpointHealth: (await import('../coordination/endpoint-health.ts')).endpointHealthSource({ endpoints: etcd.endpoints, now: () => clock.now() }),
        });
  // Its tokens come only from blocks reserved in etcd while this node holds the role (design rule 5).
  const etcdBlocks: EtcdTokenBlocks | undefined =
    coordination === undefined || etcd === undefined
      ? undefined
      : (await import('../coordination/etcd-token-blocks.ts')).tokenBlocksOf(
          coordination,
          etcd.prefix,
          log,
          // `--etcd-token-block` first; the tests' tokenBlockSize sizes etcd blocks when it is not given.
          etcd.tokenBlock === undefined ? opts.tokenBlockSize : BigInt(etcd.tokenBlock),
        );
  const supplier = opts.tokenBlocks ?? etcdBlocks;
  const tokens: ReservingTokenSource =
    supplier === undefined
      ? new BlockTokenSource(
          store,
          opts.tokenBlockSize,
          (err) => log.error({ err }, 'background token reservation failed; the next block will be reserved with a blocking save'),
          // In a cluster each node reserves only the blocks of its slot (lib/tokens/token-slots.ts).
          {
            now: () => clock.now(),
            slots: opts.cluster === null ? SINGLE_SLOT : clusterSlot(opts.cluster.config.peers.findIndex((p) => p.id === opts.cluster?.nodeId)),
          },
        )
      : // The etcd mode: blocks only from etcd; until one is in hand, requests wait (supplied-tokens.ts).
        suppliedTokens(supplier, durable, log, () => ({ engine, driver }));
  const engine = new LockEngine(clock, tokens);
  // The etcd mode's source has no block until this node is promoted: requests wait until then.
  if (tokens instanceof SuppliedTokenSource && !tokens.supplied) engine.awaitTokens();
  // Applied here and, in a cluster, by this node's promotion too (keepDetached): each node its own.
  engine.limitDetached({ maxMs: opts.maxParkMs, maxClaims: opts.maxParked });
  const driver = new EngineDriver(engine, clock);
  // Grants refused for want of a token are retried once a second, outside the engine (grant-retry.ts).
  const grantRetry = new GrantRetry({ engine, wake: () => driver.poke(), tokenHighWater: () => tokens.highWater, logger: log });
  const flusher = new FlushScheduler();
  const instanceId = randomUUID();
  const adminToken = opts.adminToken ?? randomBytes(24).toString('base64url');
  let state: DaemonState = 'starting';

  const common = {
    ...listenerLimits(opts.maxConnections, log, opts.openFileLimit),
    host: opts.host,
    ioTimeoutMs: opts.ioTimeoutMs,
    clock,
    flusher,
    afterInput: () => driver.poke(),
    logger: log,
  };
  const keyed = new LineListener(
    { ...common, port: opts.lockPort, protocol: 'keyed' },
    (transport, ctx) => new KeyedConnection(transport, ctx, engine, { maxBacklog: opts.maxBacklog }),
    KEYED_REFUSAL,
  );
  const sessions = new LineListener(
    { ...common, port: opts.sessionPort, protocol: 'session' },
    (transport, ctx) => new SessionConnection(transport, ctx, engine),
    SESSION_REFUSAL,
  );
  // How a cluster node moves these listeners' clients when its role changes (client-steering.ts).
  const steering = new ClientSteering(keyed, sessions);
  const connections = () => ({ keyed: keyed.connections.size, session: sessions.connections.size });
  let addresses = { lock: '', session: '', http: '' };
  const viewClock = { now: () => clock.now(), wall: (t: number) => Date.now() - (clock.now() - t) };
  // Every force-release and kick on this engine goes through here, from this node's API or a
  // standby's: it wakes the driver after a change (admin-ops.ts).
  const lockOps = localLockOps(engine, viewClock, () => driver.poke());
  if (opts.cluster !== null) {
    clusterNode = new ClusterNode({
      ...(coordination === undefined
        ? {}
        : { coordination, onRoleChange: (role: NodeRole) => (role === 'active' ? gating?.activate() : gating?.deactivate()) }),
      cluster: opts.cluster,
      instanceId,
      adminToken,
      engine,
      tokens,
      clock: { now: () => clock.now(), wallNow: () => Date.now() },
      clients: steering,
      driver,
      ceilingStore: {
        persist: (c) => durable.saveAhead(c),
        // Asked on every heartbeat: the store's own record, not a read of the ceiling files.
        stored: () => durable.savedCeiling,
      },
      localAdmin: {
        run: (op, stopReason) => lockOps.run(op, stopReason),
        // `ops` is created below; the cluster audits only once it runs, after start-up.
        audit: (who, op, result) => auditForwardedOp(ops.audit, who, op, result),
      },
      logger: log,
    });
    const source = clusterNode.source;
    fanOut?.attach(source);
    flusher.setLead(() => source.flush());
    if (coordination !== undefined) {
      const node = clusterNode;
      gating = new EtcdReplyGating({
        source,
        scheduler: flusher,
        store: (members) => coordination.holder.storeInSync(members),
        mayChange: () => node.state.phase === 'active',
        ...(etcd?.inSyncMembers === undefined ? {} : { maxMembers: etcd.inSyncMembers }),
        ...(etcd?.lagBoundMs === undefined ? {} : { lagBoundMs: etcd.lagBoundMs }),
        priority: opts.cluster.config.peers.map((p) => p.id),
        onChange: (e) => log.info({ members: e.members, stored: e.stored, err: e.error }, 'in-sync set change'),
      });
    }
  }
  const ops = await createOpsServices({
    ...(clusterNode === null ? {} : { cluster: clusterNode }),
    lockOps,
    engine,
    instanceId,
    nodeId: opts.nodeId,
    host: opts.host,
    dataDir: opts.dataDir,
    adminToken,
    readToken: opts.readToken,
    clock: viewClock,
    state: () => state,
    connections,
    addresses: () => addresses,
    logger: log,
  });
  // The cluster-wide audit (server/cluster/audit-replication.ts): peers get this node's entries, it gets theirs.
  clusterNode?.auditReplication.attach(ops.audit);
  let shutdownPromise: Promise<void> | null = null;
  const shutdown = () => (shutdownPromise ??= drainAndClose());
  let consoleServer: ConsoleServer | null = null;
  let http: Server | null = null;
  // The metrics' background claim census (server/http/claim-census.ts) ends with the daemon.
  let stopCensus = (): void => {};

  try {
    const registry = createMetrics(engine, connections, {
      role: ops.role,
      nodeId: opts.nodeId,
      instanceId,
      eventStreams: () => ops.hub.subscriberCount,
      cluster: () => ops.cluster.view(),
      audit: () => ops.audit.health(),
      engineNow: () => clock.now(),
      tokensRemaining: () => tokens.remaining,
      signInsThrottled: () => ops.security.throttledSignIns,
      ...(clusterNode === null
        ? {}
        : {
            clusterNode: {
              peerAuthRefusals: () => clusterNode.mesh.authRefusals,
              failoversRecorded: () => clusterNode.timeline.recorded,
              claimFates: () => clusterNode.timeline.fates,
              onClientStall: (listener) => clusterNode.timeline.stallListeners.push(listener),
              coordinationMode: opts.cluster?.etcd === undefined ? 'peers' : 'etcd',
            },
          }),
    });
    stopCensus = () => registry.stopCensus();
    const facade = createOpsFacade({
      instanceId,
      engine,
      clock: viewClock,
      lockIndex: ops.lockIndex,
      contention: ops.contention,
      state: () => state,
      role: ops.role,
      stats: ops.stats,
      cluster: () => ops.cluster.view(),
      history: ops.history,
      admin: ops.cluster,
      metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
      security: ops.security,
      audit: ops.audit,
      feed: ops.hub,
    });
    // Registered before the HTTP port opens: a route handler may run as soon as it does.
    if (!registerDaemonFacade(facade) && opts.console === 'next') {
      throw new Error('another daemon in this process already serves the console; one console per process');
    }
    if (opts.console === 'next') {
      consoleServer = await createConsoleServer({ host: opts.host, port: opts.httpPort, dev: opts.consoleDev, ioTimeoutMs: opts.ioTimeoutMs, daemon: facade });
      http = consoleServer.http;
    } else {
      http = createHttpServer(facade, opts.host, opts.ioTimeoutMs);
    }
    const httpServer = http;
    // The lock listeners (and the peer port) settle together before anything is judged, so a
    // failure never leaves another one binding later.
    // A clustered node holds clients from the first connection until it knows its role.
    if (clusterNode !== null) {
      steering.setRoute(HOLD);
      driver.pause();
    }
    // The console's modules are loaded before the lock ports open and the node joins its
    // cluster: loading them on a first page view would stall the lock path (console-warm-up.ts).
    const httpAddress = await listenHttp(httpServer, opts.host, opts.httpPort);
    // (Not in dev mode: there a first request compiles its route, which takes seconds.)
    if (consoleServer !== null && !opts.consoleDev) {
      const warmed = await warmUpConsole(httpAddress);
      log.debug({ warmed }, 'console warmed up');
    }
    const listens = await Promise.allSettled([keyed.listen(), sessions.listen(), clusterNode?.start()]);
    for (const result of listens) if (result.status === 'rejected') throw result.reason;
    const [lockAddress, sessionAddress] = listens.map((r) => (r as PromiseFulfilledResult<AddressInfo>).value) as [AddressInfo, AddressInfo];
    addresses = { lock: hostPort(lockAddress), session: hostPort(sessionAddress), http: hostPort(httpAddress) };
    state = 'serving';
    const daemon: Daemon = { instanceId, engine, lockAddress, sessionAddress, httpAddress, adminToken, state: () => state, shutdown };
    log.info({ lock: lockAddress, session: sessionAddress, http: httpAddress, instanceId, console: opts.console }, 'baton serving');
    return daemon;
  } catch (err) {
    grantRetry.stop();
    keyed.destroyAll();
    sessions.destroyAll();
    driver.stop();
    stopCensus();
    etcdBlocks?.stop();
    await Promise.allSettled([keyed.stopAccepting(), sessions.stopAccepting(), closeHttp(http, consoleServer, log), ops.close(), clusterNode?.stop()]);
    unregisterDaemonFacade(instanceId);
    throw err;
  }

  async function drainAndClose(): Promise<void> {
    // An active cluster node hands its role (and its keyed grants) to a standby before it drains.
    if (clusterNode !== null) {
      try {
        await clusterNode.beforeShutdown();
      } catch (err) {
        log.error({ err }, 'handoff before shutdown failed; draining anyway');
      }
    }
    state = 'draining';
    log.info({ drainMs: opts.drainMs }, 'draining: closing protocol listeners');
    try {
      const keyedClosed = keyed.stopAccepting();
      const sessionsClosed = sessions.stopAccepting();
      keyed.closeAll();
      sessions.closeAll();
      // Health and metrics stay up through the drain window so orchestrators see "draining".
      await new Promise((resolve) => setTimeout(resolve, opts.drainMs));
      keyed.destroyAll();
      sessions.destroyAll();
      await Promise.all([keyedClosed, sessionsClosed]);
      grantRetry.stop();
      driver.stop();
      // A block reservation still trying etcd ends now (its promise rejects; nothing waits for it).
      etcdBlocks?.stop();
      // A background ceiling save stuck on a dead disk must not hold the exit forever.
      await Promise.race([tokens.settled(), new Promise((resolve) => setTimeout(resolve, STOP_CEILING_SAVE_WAIT_MS).unref())]);
      // The hub ends its event streams first: an open stream would hold the HTTP server open.
      await ops.close();
      await clusterNode?.stop();
    } finally {
      // Whatever failed above (an audit log on a dying disk), the port, Next and the data dir
      // are still given back.
      await closeHttp(http, consoleServer, log);
      stopCensus();
      unregisterDaemonFacade(instanceId);
      await dirLock?.release();
      log.info('baton stopped');
    }
  }
}

/** "127.0.0.1:7070", "[::1]:7070": the form clients and the CLI take. */
export function hostPort(a: AddressInfo): string {
  return formatAddress({ host: a.address, port: a.port });
}

/**
 * Stops the HTTP server, then Next. The close callback only resolves a promise: with no open
 * connections it fires before Next has closed, and Next must still get to close.
 */
async function closeHttp(http: Server | null, consoleServer: ConsoleServer | null, log: Logger): Promise<void> {
  let closed: Promise<void> = Promise.resolve();
  let force: NodeJS.Timeout | undefined;
  if (http?.listening) {
    closed = new Promise<void>((resolve) => http.close(() => resolve()));
    http.closeIdleConnections();
    force = setTimeout(() => http.closeAllConnections(), STOP_HTTP_GRACE_MS);
  }
  if (consoleServer !== null) {
    await consoleServer.closeNext();
    log.info('console closed');
  }
  await closed;
  clearTimeout(force);
}
