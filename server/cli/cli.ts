// The `baton` command line. Bad flags or arguments print a clear message and exit 2.
import { Command, CommanderError, Option } from 'commander';
import {
  DEFAULT_ETCD_LAG_BOUND_MS,
  DEFAULT_ETCD_TOKEN_BLOCK,
  MAX_ETCD_LAG_BOUND_MS,
  MAX_ETCD_TOKEN_BLOCK,
  MIN_ETCD_LAG_BOUND_MS,
  MIN_ETCD_TOKEN_BLOCK,
} from '../../lib/cluster/cluster-config.ts';
import { formatDurationFlag } from '../../lib/duration-flag.ts';
import { EXIT_USAGE } from '../../lib/errors.ts';
import { DEFAULT_OPTIONS } from '../daemon/daemon.ts';
import {
  addressOption,
  COORDINATION_MODES,
  DEFAULT_ETCD_IN_SYNC,
  DEFAULT_ETCD_LEASE_TTL_S,
  countOption,
  durationOption,
  etcdEndpointsOption,
  etcdInSyncOption,
  etcdLagBoundOption,
  etcdLeaseTtlOption,
  etcdPrefixOption,
  etcdTokenBlockOption,
  maxParkOption,
  peerTimeoutOption,
  portOption,
  positiveDurationOption,
  tokenFloorOption,
} from './cli-options.ts';
import { serve } from './serve-command.ts';
import { registerRunCommand } from './run-command.ts';
import type { ConformanceFlags } from '../conformance/conformance-command.ts';

const program = new Command('baton')
  .description('Baton: a lock service with FIFO queues, direct handover, leases and fencing tokens')
  .exitOverride()
  .showHelpAfterError('(run baton --help for usage)');

program
  .command('serve')
  .description('run the lock daemon (keyed and session protocols) and the operator console (dashboard, ops API, health, metrics)')
  .option('--host <host>', 'address to bind', DEFAULT_OPTIONS.host)
  .option('--lock-port <port>', 'keyed protocol port (0 picks a free one)', portOption, DEFAULT_OPTIONS.lockPort)
  .option('--session-port <port>', 'session protocol port (0 picks a free one)', portOption, DEFAULT_OPTIONS.sessionPort)
  .option('--http-port <port>', 'HTTP port of the console, the ops API, health and metrics (0 picks a free one)', portOption, DEFAULT_OPTIONS.httpPort)
  .addOption(new Option('--admin-token <token>', 'token every mutation needs (default: a random one, printed once at start)').env('BATON_ADMIN_TOKEN'))
  .addOption(new Option('--read-token <token>', 'when set, reads (API, events, metrics) need it or the admin token').env('BATON_READ_TOKEN'))
  .option(
    '--no-console',
    'no dashboard: the HTTP port serves only the probes (/healthz, /readyz), /metrics and the JSON ops API (/api/v1, the event stream included), without loading Next or needing its build; the dashboard page answers a JSON 404',
  )
  .addOption(new Option('--console-dev', 'run the console with Next dev server (for working on the dashboard)').hideHelp())
  .option('--data-dir <dir>', 'where the fencing-token ceiling is kept', './data')
  .option(
    '--token-floor <n>',
    'issue every token above n: needed once to start on a data dir that lost its token ceiling files (n = the highest token ever issued); otherwise only raises the ceiling',
    tokenFloorOption,
  )
  .option('--io-timeout <duration>', 'longest a line may take to arrive or a reply to be read', positiveDurationOption, DEFAULT_OPTIONS.ioTimeoutMs)
  .option('--drain <duration>', 'how long health and metrics stay up after the lock ports close', durationOption, DEFAULT_OPTIONS.drainMs)
  .option('--max-connections <n>', 'connections per protocol; the rest are refused with an error', countOption, DEFAULT_OPTIONS.maxConnections)
  .option('--max-backlog <n>', 'requests that may wait at once on one keyed connection', countOption, DEFAULT_OPTIONS.maxBacklog)
  .addOption(
    new Option('--max-park <duration>', 'longest a resumable session claim whose connection was reset waits for its client to RESUME it, whatever its lease')
      .argParser(maxParkOption)
      .default(DEFAULT_OPTIONS.maxParkMs, '60s'),
  )
  .option(
    '--max-parked <n>',
    'resumable session claims that may wait for their clients at once; past it a reset connection releases its claim as a close does',
    countOption,
    DEFAULT_OPTIONS.maxParked,
  )
  .addOption(
    new Option('--log-level <level>', 'log level (logs go to stderr)').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  )
  .option(
    '--config <file>',
    "run as one node of a cluster described by this JSON file (host and ports then come from the node's entry; needs the shared admin token)",
  )
  .option('--node <id>', 'with --config: which node of the file this process is (data dir default becomes ./data/<id>)')
  .addOption(
    new Option('--peer-timeout <duration>', 'with --config: how long a silent peer still counts as alive').argParser(peerTimeoutOption).default(1_000, '1s'),
  )
  .addOption(
    new Option(
      '--peer-listen <host:port>',
      "with --config: listen for peer links here instead of the entry's host:peerPort (behind a proxy or port forward)",
    ).argParser(addressOption),
  )
  .option(
    '--return-hold-down <duration>',
    'with --config: how long a higher-priority node must be a synced standby without a break before the active hands the role back to it (default: 10 peer timeouts, at least 10s; 0: at once)',
    durationOption,
  )
  .addOption(
    new Option(
      '--coordination <mode>',
      'with --config: who decides which node is active: the peers among themselves, or etcd (the partition-safe mode: a node cut off from etcd stops granting; see docs/cluster.md, "Two modes")',
    )
      .choices(COORDINATION_MODES)
      .default('peers'),
  )
  .option('--etcd-endpoints <urls>', 'with --coordination etcd: the etcd members, http://host:port[,http://host:port...]', etcdEndpointsOption)
  .option('--etcd-prefix <prefix>', "with --coordination etcd: this cluster's key prefix in etcd (default: baton/<the node ids joined by ->)", etcdPrefixOption)
  .addOption(
    new Option(
      '--etcd-lease-ttl <seconds>',
      "with --coordination etcd: the role lease's TTL in whole seconds (1 to 60); a failover after a crash takes about this long",
    )
      .argParser(etcdLeaseTtlOption)
      .default(DEFAULT_ETCD_LEASE_TTL_S),
  )
  .addOption(
    new Option(
      '--etcd-in-sync <n>',
      'with --coordination etcd: at most this many standbys in the in-sync set, the highest-priority synced ones (1 to 63); every reply waits for each of them, and only they may take the role after the active (see docs/cluster.md, "Replies in the etcd mode")',
    )
      .argParser(etcdInSyncOption)
      .default(DEFAULT_ETCD_IN_SYNC),
  )
  .addOption(
    new Option(
      '--etcd-token-block <n>',
      `with --coordination etcd: tokens per block the active reserves in etcd, one compare-and-swap each (${MIN_ETCD_TOKEN_BLOCK} to ${MAX_ETCD_TOKEN_BLOCK}: a standby accepts tokens up to two skipped blocks ahead of the last it saw); smaller means more swaps, larger more tokens skipped at each failover (see docs/cluster.md, "Tokens in the etcd mode")`,
    )
      .argParser(etcdTokenBlockOption)
      .default(DEFAULT_ETCD_TOKEN_BLOCK),
  )
  .addOption(
    new Option(
      '--etcd-lag-bound <duration>',
      `with --coordination etcd: how old an in-sync member's oldest unacknowledged batch may grow before the active takes it out of the set (${MIN_ETCD_LAG_BOUND_MS}ms to ${MAX_ETCD_LAG_BOUND_MS / 1_000}s); lower resumes replies sooner when a member stalls, at the price of taking out one that is only slow (a member silent for --peer-timeout is out anyway)`,
    )
      .argParser(etcdLagBoundOption)
      .default(DEFAULT_ETCD_LAG_BOUND_MS, formatDurationFlag(DEFAULT_ETCD_LAG_BOUND_MS)),
  )
  .action(serve);

registerRunCommand(program);

program
  .command('conformance-server')
  .description("play the server side of the wire conformance kit's vectors for a client under test (conformance/README.md)")
  .option('--port <port>', 'control port (0 picks a free one)', portOption, 7700)
  .option('--host <host>', "address to bind the control port and every vector's nodes", '127.0.0.1')
  .option('--vectors <dir>', 'the vector files to load (default: conformance/vectors of this Baton)')
  // Loaded only when asked for: the other commands do not pay for the kit's schemas.
  .action(async (flags: ConformanceFlags) => (await import('../conformance/conformance-command.ts')).conformanceServer(flags));

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version are not errors; everything else commander rejects is a usage error.
    process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
  }
  process.stderr.write(`baton: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
