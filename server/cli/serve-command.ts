// `baton serve`: starts the daemon, prints the chosen ports on one line, and shuts down
// gracefully on SIGINT/SIGTERM (exit 0).
import type { Command, OptionValueSource } from 'commander';
import pino from 'pino';
import { EXIT_USAGE } from '../../lib/errors.ts';
import { DEFAULT_ETCD_LAG_BOUND_MS, DEFAULT_ETCD_TOKEN_BLOCK, defaultEtcdPrefix, findPeer, readClusterConfig } from '../../lib/cluster/cluster-config.ts';
import { checkToken, DEFAULT_ETCD_IN_SYNC, DEFAULT_ETCD_LEASE_TTL_S } from './cli-options.ts';
import type { Address } from '../../lib/protocol/address-text.ts';
import { type Daemon, hostPort, startDaemon, type DaemonOptions } from '../daemon/daemon.ts';
import { StartRefused } from '../daemon/data-dir-check.ts';

/** EX_SOFTWARE (sysexits.h): an internal error stopped the daemon. */
const EXIT_SOFTWARE = 70;

export interface ServeFlags {
  host: string;
  lockPort: number;
  sessionPort: number;
  httpPort: number;
  dataDir: string;
  ioTimeout: number;
  drain: number;
  maxConnections: number;
  maxBacklog: number;
  maxPark: number;
  maxParked: number;
  adminToken?: string;
  readToken?: string;
  /** commander's --no-console: false turns the console off. */
  console: boolean;
  consoleDev?: boolean;
  logLevel: string;
  /** The cluster file; absent runs a single node. */
  config?: string;
  node?: string;
  peerTimeout: number;
  peerListen?: Address;
  returnHoldDown?: number;
  tokenFloor?: bigint;
  /** `--coordination`: 'peers' (the default mode) or 'etcd' (the partition-safe mode). */
  coordination?: 'peers' | 'etcd';
  etcdEndpoints?: string[];
  etcdPrefix?: string;
  /** `--etcd-lease-ttl` in whole seconds (DEFAULT_ETCD_LEASE_TTL_S when not given). */
  etcdLeaseTtl?: number;
  /** `--etcd-in-sync`: at most this many standbys in the in-sync set (DEFAULT_ETCD_IN_SYNC when not given). */
  etcdInSync?: number;
  /** `--etcd-token-block`: tokens per block reserved in etcd (DEFAULT_ETCD_TOKEN_BLOCK when not given). */
  etcdTokenBlock?: number;
  /** `--etcd-lag-bound` in ms (DEFAULT_ETCD_LAG_BOUND_MS when not given). */
  etcdLagBound?: number;
}

/** Where a flag's value came from (commander's getOptionValueSource): 'cli' or 'env' when given. */
export type FlagSource = (key: keyof ServeFlags) => OptionValueSource;

export type ServeOptions = Omit<DaemonOptions, 'logger' | 'dataDir'> & { dataDir: string };

/** The address flags a cluster entry decides; giving them too would be silently ignored. */
const ENTRY_FLAGS = [
  ['host', '--host'],
  ['lockPort', '--lock-port'],
  ['sessionPort', '--session-port'],
  ['httpPort', '--http-port'],
] as const;
const CLUSTER_ONLY_FLAGS = [
  ['node', '--node'],
  ['peerTimeout', '--peer-timeout'],
  ['peerListen', '--peer-listen'],
  ['returnHoldDown', '--return-hold-down'],
  ['coordination', '--coordination'],
] as const;
/** The etcd mode's own flags: meaningless (and refused) without `--coordination etcd`. */
const ETCD_ONLY_FLAGS = [
  ['etcdEndpoints', '--etcd-endpoints'],
  ['etcdPrefix', '--etcd-prefix'],
  ['etcdLeaseTtl', '--etcd-lease-ttl'],
  ['etcdInSync', '--etcd-in-sync'],
  ['etcdTokenBlock', '--etcd-token-block'],
  ['etcdLagBound', '--etcd-lag-bound'],
] as const;

/**
 * Turns `baton serve`'s flags into the daemon's options, reading the cluster file when there is
 * one. Every refusal happens here, before anything binds: the caller prints it and exits 2.
 */
export async function serveOptions(flags: ServeFlags, sourceOf: FlagSource): Promise<{ ok: true; options: ServeOptions } | { ok: false; message: string }> {
  const given = (key: keyof ServeFlags) => {
    const source = sourceOf(key);
    return source !== undefined && source !== 'default';
  };
  const admin = checkToken(flags.adminToken, '--admin-token', 'BATON_ADMIN_TOKEN');
  if (!admin.ok) return admin;
  const read = checkToken(flags.readToken, '--read-token', 'BATON_READ_TOKEN');
  if (!read.ok) return read;
  const single: ServeOptions = {
    host: flags.host,
    lockPort: flags.lockPort,
    sessionPort: flags.sessionPort,
    httpPort: flags.httpPort,
    dataDir: flags.dataDir,
    ioTimeoutMs: flags.ioTimeout,
    drainMs: flags.drain,
    maxConnections: flags.maxConnections,
    maxBacklog: flags.maxBacklog,
    maxParkMs: flags.maxPark,
    maxParked: flags.maxParked,
    console: flags.console ? 'next' : 'probes',
    consoleDev: flags.consoleDev === true,
    nodeId: 'local',
    cluster: null,
    adminToken: admin.token ?? null,
    readToken: read.token ?? null,
    ...(flags.tokenFloor === undefined ? {} : { tokenFloor: flags.tokenFloor }),
  };
  const etcdStray = ETCD_ONLY_FLAGS.find(([key]) => given(key));
  if (flags.coordination !== 'etcd' && etcdStray !== undefined) return { ok: false, message: `${etcdStray[1]} needs --coordination etcd` };
  const file = flags.config;
  if (file === undefined && flags.coordination === 'etcd') {
    return { ok: false, message: '--coordination etcd needs --config (the cluster file): the etcd mode chooses the active among the nodes of a cluster' };
  }
  if (flags.coordination === 'etcd' && (flags.etcdEndpoints === undefined || flags.etcdEndpoints.length === 0)) {
    return { ok: false, message: '--coordination etcd needs --etcd-endpoints http://host:port[,...]: the etcd members that hold the active role' };
  }
  if (file === undefined) {
    const stray = CLUSTER_ONLY_FLAGS.find(([key]) => given(key));
    if (stray !== undefined) return { ok: false, message: `${stray[1]} needs --config (the cluster file)` };
    return { ok: true, options: single };
  }
  if (flags.node === undefined) return { ok: false, message: `--config needs --node <id>: which of the nodes in ${file} this process is` };
  const clashing = ENTRY_FLAGS.filter(([key]) => given(key)).map(([, flag]) => flag);
  if (clashing.length > 0) {
    return {
      ok: false,
      message: `${clashing.join(', ')} cannot be used with --config: this node's host and ports come from its entry in ${file} (edit the file instead)`,
    };
  }
  // The admin token also signs the peer links: a generated one would differ on every node.
  if (admin.token === undefined) {
    return { ok: false, message: '--config needs the shared admin token (--admin-token or BATON_ADMIN_TOKEN): every node of a cluster uses the same one' };
  }
  const loaded = await readClusterConfig(file);
  if (!loaded.ok) return loaded;
  const found = findPeer(loaded.config, flags.node, file);
  if (!found.ok) return { ok: false, message: `--node: ${found.message}` };
  const { peer } = found;
  return {
    ok: true,
    options: {
      ...single,
      host: peer.host,
      lockPort: peer.lockPort,
      sessionPort: peer.sessionPort,
      httpPort: peer.httpPort,
      // Nodes started from one checkout must not share (and fight over) one data directory.
      dataDir: given('dataDir') ? flags.dataDir : `${flags.dataDir}/${peer.id}`,
      nodeId: peer.id,
      cluster: {
        config: loaded.config,
        nodeId: peer.id,
        peerTimeoutMs: flags.peerTimeout,
        peerListen: flags.peerListen ?? null,
        ...(flags.returnHoldDown === undefined ? {} : { returnHoldDownMs: flags.returnHoldDown }),
        ...(flags.coordination === 'etcd'
          ? {
              etcd: {
                endpoints: flags.etcdEndpoints ?? [],
                prefix: flags.etcdPrefix ?? defaultEtcdPrefix(loaded.config),
                leaseTtlSeconds: flags.etcdLeaseTtl ?? DEFAULT_ETCD_LEASE_TTL_S,
                inSyncMembers: flags.etcdInSync ?? DEFAULT_ETCD_IN_SYNC,
                tokenBlock: flags.etcdTokenBlock ?? DEFAULT_ETCD_TOKEN_BLOCK,
                lagBoundMs: flags.etcdLagBound ?? DEFAULT_ETCD_LAG_BOUND_MS,
              },
            }
          : {}),
      },
    },
  };
}

export async function serve(flags: ServeFlags, command: Command): Promise<void> {
  const prepared = await serveOptions(flags, (key) => command.getOptionValueSource(key));
  if (!prepared.ok) {
    process.stderr.write(`baton: ${prepared.message}\n`);
    process.exit(EXIT_USAGE);
  }
  const logger = pino({ level: flags.logLevel, base: { service: 'baton' } }, pino.destination(2));
  const options: Partial<DaemonOptions> = { ...prepared.options, logger };
  // Fail-stop: an error that escapes (such as a token ceiling that cannot be made durable) leaves
  // no safe way to go on granting locks. Say so in the log and exit non-zero at once; clients
  // fail over or reconnect, and a restart continues the token sequence above the stored ceiling.
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'fatal error: exiting without a drain');
    process.exit(EXIT_SOFTWARE);
  });
  // Signals are handled from before the start: a SIGTERM while Next prepares must still drain
  // (once the start completes) rather than kill the process with the data dir half set up.
  let daemon: Daemon | null = null;
  let stopping = false;
  let firstSignalAt = 0;
  const stop = (d: Daemon) => {
    d.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // One Ctrl-C can arrive twice (from the terminal's process group and forwarded by npm):
      // only a signal a second or more after the first means "stop now, skip the drain".
      if (Date.now() - firstSignalAt < 1_000) return;
      logger.warn({ signal }, 'second signal: exiting without finishing the drain');
      process.exit(1);
    }
    stopping = true;
    firstSignalAt = Date.now();
    logger.info({ signal }, 'shutting down');
    if (daemon !== null) stop(daemon);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    daemon = await startDaemon(options);
  } catch (err) {
    // A data dir the operator must fix: said plainly, with its own exit code (docs/console.md).
    if (!(err instanceof StartRefused)) throw err;
    logger.fatal({ exitCode: err.exitCode }, err.message);
    process.stderr.write(`baton: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stdout.write(
    `baton serving lock=${hostPort(daemon.lockAddress)} session=${hostPort(daemon.sessionAddress)} http=${hostPort(daemon.httpAddress)} data-dir=${prepared.options.dataDir} instance=${daemon.instanceId}\n`,
  );
  if (prepared.options.adminToken === null) {
    // Printed once, here, and nowhere else (not logged): the operator copies it to sign in.
    process.stdout.write(`admin token (generated; set --admin-token or BATON_ADMIN_TOKEN to choose one): ${daemon.adminToken}\n`);
  }
  if (stopping) stop(daemon);
}
