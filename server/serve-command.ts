// `baton serve`: starts the daemon, prints the chosen ports on one line, and shuts down
// gracefully on SIGINT/SIGTERM (exit 0).
import pino from 'pino';
import { startDaemon, type DaemonOptions } from './daemon.ts';

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
  const logger = pino({ level: flags.logLevel, base: { service: 'baton' } }, pino.destination(2));
  const options: Partial<DaemonOptions> = {
    host: flags.host, lockPort: flags.lockPort, sessionPort: flags.sessionPort, httpPort: flags.httpPort,
    dataDir: flags.dataDir, ioTimeoutMs: flags.ioTimeout, drainMs: flags.drain,
    maxConnections: flags.maxConnections, maxBacklog: flags.maxBacklog, logger,
    console: flags.console ? 'next' : 'probes', consoleDev: flags.consoleDev === true,
    adminToken: flags.adminToken ?? null, readToken: flags.readToken ?? null,
  };
  // Fail-stop: an error that escapes (such as a token ceiling that cannot be made durable) leaves
  // no safe way to go on granting locks. Say so in the log and exit non-zero at once; clients
  // fail over or reconnect, and a restart continues the token sequence above the stored ceiling.
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'fatal error: exiting without a drain');
    process.exit(EXIT_SOFTWARE);
  });
  const daemon = await startDaemon(options);
  const hostPort = (a: { address: string; port: number }) => `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
  process.stdout.write(
    `baton serving lock=${hostPort(daemon.lockAddress)} session=${hostPort(daemon.sessionAddress)} http=${hostPort(daemon.httpAddress)} data-dir=${flags.dataDir} instance=${daemon.instanceId}\n`,
  );
  if (flags.adminToken === undefined) {
    // Printed once, here, and nowhere else (not logged): the operator copies it to sign in.
    process.stdout.write(`admin token (generated; set --admin-token or BATON_ADMIN_TOKEN to choose one): ${daemon.adminToken}\n`);
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without finishing the drain');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down');
    daemon.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
