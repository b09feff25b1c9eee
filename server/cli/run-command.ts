// `baton run <name> -- <command...>`: holds a lock through the session protocol while a command
// runs, like `flock` or `consul lock`. The command gets its fencing token in BATON_TOKEN and is
// sent SIGTERM (SIGKILL after --grace) the moment ownership is lost; baton exits with its code.
import { spawn } from 'node:child_process';
import { constants, hostname } from 'node:os';
import { type Command, Option } from 'commander';
import { SessionClient, LockTimeoutError, BatonError, DEFAULT_SESSION_PORT } from '../../lib/client/index.ts';
import type { SessionLease } from '../../lib/client/index.ts';
import { formatAddress } from '../../lib/protocol/address-text.ts';
import { ERRORS, EXIT_USAGE } from '../../lib/errors.ts';
import type { ErrorName } from '../../lib/errors.ts';
import { formatDurationFlag } from '../../lib/duration-flag.ts';
import { runClientName } from './run-client-name.ts';
import { addressListOption, clientNameOption, durationOption, maxParkOption, positiveDurationOption } from './cli-options.ts';
import type { Address } from '../../lib/protocol/address-text.ts';

/** EX_UNAVAILABLE (sysexits.h): no Baton server could be reached. */
export const EXIT_UNAVAILABLE = 69;
/** EX_TEMPFAIL (sysexits.h): the lock stayed busy for the whole --wait; trying later may work. */
export const EXIT_TEMPFAIL = 75;
/** The command exited 0, but the lock had been lost while it ran. */
const EXIT_LOST = 1;
/** Signals passed on to the command (SIGINT reaches it through the terminal's process group). */
const FORWARDED: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGQUIT'];
/** What a shell returns when it cannot start a command. */
const EXIT_CANNOT_RUN = 127;
/** How long SessionClient keeps trying while no server answers at all, at most. */
const UNREACHABLE_AFTER_MS = 5_000;

/** Errors from checking our own flags: the same class of mistake as a bad flag. */
const USAGE_ERRORS: ReadonlySet<ErrorName> = new Set(['bad-key', 'bad-lease', 'bad-wait', 'bad-usage']);
/** Errors a server gave or caused while we were still trying to reach one that would queue us. */
const UNREACHABLE_ERRORS: ReadonlySet<ErrorName> = new Set(['io-timeout', 'lease-expired']);

interface RunFlags {
  lease: number;
  wait: number;
  addr: Address[];
  grace: number;
  /** The servers' --max-park (ms): how long they keep our claim between connections. */
  maxPark: number;
  clientName?: string;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('hold a lock (session protocol) while a command runs; the command gets its fencing token in BATON_TOKEN')
    .argument('<name>', 'the lock to hold')
    .argument('<command...>', 'the command and its arguments, after --')
    .addOption(
      new Option('--lease <duration>', 'session lease: the server frees the lock after this long without hearing from baton')
        .argParser(positiveDurationOption)
        .default(5_000, '5s'),
    )
    .addOption(
      new Option('--wait <duration>', 'give up (exit 75) if the lock is not held within this long; 0 waits forever')
        .argParser(durationOption)
        .default(30_000, '30s'),
    )
    .addOption(
      new Option('--addr <host:port,...>', 'session ports of the Baton servers, tried in order')
        .argParser(addressListOption)
        .default([{ host: '127.0.0.1', port: DEFAULT_SESSION_PORT }], `127.0.0.1:${DEFAULT_SESSION_PORT}`),
    )
    .addOption(
      new Option('--grace <duration>', 'after the lock is lost, how long the command has to exit after SIGTERM before SIGKILL')
        .argParser(durationOption)
        .default(10_000, '10s'),
    )
    .addOption(
      new Option(
        '--max-park <duration>',
        "the servers' --max-park: when the connection is lost, the command is stopped by 0.8 x the shorter of it and the lease unless a server takes the claim up again",
      )
        .argParser(maxParkOption)
        .default(60_000, '60s'),
    )
    .addOption(
      new Option(
        '--client-name <identity>',
        'who holds the lock, as operators see it (default: baton run <command, quoted as a shell reads it> @<host> pid <pid>)',
      ).argParser(clientNameOption),
    )
    .addHelpText(
      'after',
      `
The command runs with BATON_TOKEN (the fencing token) and BATON_LOCK (the lock name) in its
environment and baton's stdin, stdout and stderr. SIGTERM, SIGHUP and SIGQUIT sent to baton are
passed on to it; Ctrl-C reaches it directly through the terminal. If ownership is lost while it
runs, it is sent SIGTERM, then SIGKILL after --grace.

Exit codes:
  the command's own    the command exited (128 + n if it was killed by signal n); but 1 if
                       it exited 0 after the lock was lost
  2                    bad flags or arguments
  ${EXIT_UNAVAILABLE}                   no Baton server answered for 5s, or for half of --wait if that is
                       shorter (EX_UNAVAILABLE)
  ${EXIT_TEMPFAIL}                   the lock was not held within --wait (EX_TEMPFAIL)
  ${EXIT_CANNOT_RUN}                  the command could not be started
  1                    anything else (e.g. an admin removed baton from the queue)

Example:
  baton run jobs/nightly --lease 5s --wait 30s -- sh -c 'echo "token $BATON_TOKEN"; ./nightly.sh'`,
    )
    .action(runUnderLock);
}

async function runUnderLock(name: string, command: string[], flags: RunFlags): Promise<void> {
  const waitMs = flags.wait > 0 ? flags.wait : Infinity;
  // Half the wait at most, so an unreachable cluster is reported as such rather than as a busy lock.
  const client = new SessionClient({
    addresses: flags.addr,
    reconnectFor: Math.min(UNREACHABLE_AFTER_MS, waitMs / 2),
    clientName: flags.clientName ?? runClientName(command, hostname(), process.pid),
    maxPark: flags.maxPark,
  });
  const deadline = performance.now() + waitMs;
  let lease: SessionLease;
  for (;;) {
    try {
      lease = await client.open(name, { lease: flags.lease, wait: Math.max(1, deadline - performance.now()) });
    } catch (error) {
      await client.close();
      return exit(...failureToAcquire(error, name, flags));
    }
    // The grant and its loss can arrive together (a slow client, merged writes): never start the
    // command under a lock that is already gone; queue again for what is left of the wait.
    if (!lease.signal.aborted) break;
    await lease.close();
  }
  process.exit(await runCommand(lease, command, flags.grace, client));
}

function failureToAcquire(error: unknown, name: string, flags: RunFlags): [number, string] {
  if (error instanceof LockTimeoutError) return [EXIT_TEMPFAIL, `timed out after ${formatDurationFlag(flags.wait)} waiting for lock ${name}`];
  if (!(error instanceof BatonError)) return [1, error instanceof Error ? error.message : String(error)];
  if (USAGE_ERRORS.has(error.code)) return [EXIT_USAGE, error.message];
  if (ERRORS[error.code].side === 'server' || UNREACHABLE_ERRORS.has(error.code)) {
    return [EXIT_UNAVAILABLE, `cannot reach a Baton server at ${flags.addr.map(formatAddress).join(',')}: ${error.message}`];
  }
  return [1, `could not get lock ${name}: ${error.message}`];
}

/** Runs the command while `lease` holds; resolves to baton's exit code once the session is closed. */
async function runCommand(lease: SessionLease, command: string[], graceMs: number, client: SessionClient): Promise<number> {
  const [file, ...args] = command as [string, ...string[]]; // commander requires <command...>
  let killTimer: NodeJS.Timeout | undefined;
  let lost = false;
  // The handlers go in before the spawn: a signal that arrives once the command has started must
  // never find baton with the default action (die without passing it on).
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  // Ctrl-C reaches the command by itself (same process group); forwarding it too would send it
  // twice, which many programs read as "force quit". So SIGINT is only kept from killing baton.
  const ignore = () => {};
  process.on('SIGINT', ignore);
  for (const signal of FORWARDED) process.on(signal, forward);
  const child = spawn(file, args, {
    stdio: 'inherit',
    env: { ...process.env, BATON_TOKEN: lease.token.toString(), BATON_LOCK: lease.name },
  });
  const onLost = () => {
    lost = true;
    const reason = lease.signal.reason instanceof Error ? lease.signal.reason.message : String(lease.signal.reason);
    process.stderr.write(`baton: lost lock ${lease.name}: ${reason}\n`);
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  };
  lease.signal.addEventListener('abort', onLost, { once: true });

  const code = await new Promise<number>((resolve) => {
    child.once('error', (error) => {
      process.stderr.write(`baton: cannot run ${file}: ${error.message}\n`);
      resolve(EXIT_CANNOT_RUN);
    });
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
  // Our own close aborts the signal too; that is a release, not a loss.
  lease.signal.removeEventListener('abort', onLost);
  clearTimeout(killTimer);
  // The handlers stay until exit: a late signal while the lease closes is then harmless (the
  // command is gone) instead of killing baton before it has released.
  await lease.close();
  await client.close();
  if (lost && code === 0) {
    // The command may have finished its work after ownership was gone: never report success then.
    process.stderr.write(`baton: exiting ${EXIT_LOST}: the lock was lost while the command ran\n`);
    return EXIT_LOST;
  }
  return code;
}

function exit(code: number, message: string): never {
  process.stderr.write(`baton: ${message}\n`);
  process.exit(code);
}
