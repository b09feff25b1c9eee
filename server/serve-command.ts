// `baton serve`: starts the daemon, prints the chosen ports on one line, and shuts down
// gracefully on SIGINT/SIGTERM (exit 0).
import pino from 'pino';
import { EXIT_USAGE } from '../lib/errors.ts';
import { checkToken } from './cli-options.ts';
import { type Daemon, hostPort, startDaemon, type DaemonOptions } from './daemon.ts';

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
  adminToken?: string;
  readToken?: string;
  /** commander's --no-console: false turns the console off. */
  console: boolean;
  consoleDev?: boolean;
  logLevel: string;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const admin = checkToken(flags.adminToken, '--admin-token', 'BATON_ADMIN_TOKEN');
  const read = checkToken(flags.readToken, '--read-token', 'BATON_READ_TOKEN');
  for (const check of [admin, read]) {
    if (!check.ok) {
      process.stderr.write(`baton: ${check.message}\n`);
      process.exit(EXIT_USAGE);
    }
  }
  const adminToken = admin.ok ? admin.token : undefined;
  const readToken = read.ok ? read.token : undefined;
  const logger = pino({ level: flags.logLevel, base: { service: 'baton' } }, pino.destination(2));
  const options: Partial<DaemonOptions> = {
    host: flags.host, lockPort: flags.lockPort, sessionPort: flags.sessionPort, httpPort: flags.httpPort,
    dataDir: flags.dataDir, ioTimeoutMs: flags.ioTimeout, drainMs: flags.drain,
    maxConnections: flags.maxConnections, maxBacklog: flags.maxBacklog, logger,
    console: flags.console ? 'next' : 'probes', consoleDev: flags.consoleDev === true,
    adminToken: adminToken ?? null, readToken: readToken ?? null,
  };
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
  daemon = await startDaemon(options);
  process.stdout.write(
    `baton serving lock=${hostPort(daemon.lockAddress)} session=${hostPort(daemon.sessionAddress)} http=${hostPort(daemon.httpAddress)} data-dir=${flags.dataDir} instance=${daemon.instanceId}\n`,
  );
  if (adminToken === undefined) {
    // Printed once, here, and nowhere else (not logged): the operator copies it to sign in.
    process.stdout.write(`admin token (generated; set --admin-token or BATON_ADMIN_TOKEN to choose one): ${daemon.adminToken}\n`);
  }
  if (stopping) stop(daemon);
}
