// What ops/systemd/unit.test.ts holds the service unit to. Each check returns the problems it
// found (empty when the unit passes), so the test can show each one failing on a broken copy.
import { HANDOFF_TIMEOUT_MS } from '../../server/cluster/cluster-transitions.ts';
import { SHUTDOWN_TRANSITION_WAIT_MS } from '../../server/cluster/cluster-node.ts';
import { STOP_CEILING_SAVE_WAIT_MS, STOP_HTTP_GRACE_MS } from '../../server/daemon/daemon.ts';
import { connectionBudget } from '../../server/lines/open-files.ts';
import { parseDurationFlag } from '../../lib/duration-flag.ts';
import { directive, type EnvVariable, execArgv, execVariables, parseTimeSpan, type UnitFile } from './unit-file.ts';

/** The hardening a lock daemon should have (issue 31), as directive -> required value. */
export const HARDENING: Record<string, string> = {
  'Service.NoNewPrivileges': 'yes',
  'Service.ProtectSystem': 'strict',
  'Service.ProtectHome': 'yes',
  'Service.PrivateTmp': 'yes',
  'Service.PrivateDevices': 'yes',
  'Service.RestrictAddressFamilies': 'AF_INET AF_INET6 AF_UNIX',
  'Service.CapabilityBoundingSet': '',
  'Service.StateDirectory': 'baton',
  'Service.Restart': 'on-failure',
};

export function hardeningProblems(unit: UnitFile): string[] {
  const problems = Object.entries(HARDENING)
    .filter(([key, value]) => directive(unit, key) !== value)
    .map(([key, value]) => `${key} is ${JSON.stringify(directive(unit, key))}, not ${JSON.stringify(value)}`);
  if (!(unit.directives.get('Service.SystemCallFilter') ?? []).includes('@system-service')) problems.push('SystemCallFilter does not allow @system-service');
  // The data dir is the state directory, the one path ProtectSystem=strict leaves writable.
  const dataDir = /--data-dir\s+(\S+)/.exec(directive(unit, 'Service.ExecStart') ?? '')?.[1];
  if (dataDir !== `/var/lib/${directive(unit, 'Service.StateDirectory')}`) problems.push(`--data-dir is ${dataDir}, not the StateDirectory under /var/lib`);
  const user = directive(unit, 'Service.User');
  if (directive(unit, 'Service.DynamicUser') !== 'yes' && (user === undefined || user === 'root' || user === '0')) problems.push('no user of its own');
  // V8's JIT maps its code pages writable and executable: the filter would kill or break node.
  const mdwe = directive(unit, 'Service.MemoryDenyWriteExecute');
  if (mdwe !== undefined && mdwe !== 'no') problems.push(`MemoryDenyWriteExecute=${mdwe} breaks V8's JIT`);
  return problems;
}

/** The exit-code table after "refuses to start with a message on stderr" in docs/console.md. */
export function documentedExitCodes(consoleMd: string): Array<{ code: number; what: string }> {
  const start = consoleMd.indexOf('refuses to start with a message');
  if (start < 0) throw new Error('docs/console.md has no "refuses to start with a message" paragraph');
  const rows: Array<{ code: number; what: string }> = [];
  let inTable = false;
  for (const line of consoleMd.slice(start).split('\n')) {
    if (line.startsWith('|')) {
      inTable = true;
      const cells = line.split('|').map((c) => c.trim());
      if (/^\d+$/.test(cells[1] ?? '')) rows.push({ code: Number(cells[1]), what: cells[3] ?? '' });
    } else if (inTable) {
      break;
    }
  }
  if (rows.length === 0) throw new Error('no exit codes found in the table of docs/console.md');
  return rows;
}

/** A code may restart only when the doc says a restart goes on safely; every other one needs a person. */
export function restartsSafely(what: string): boolean {
  return /a restart continues/i.test(what);
}

export function restartProblems(unit: UnitFile, codes: Array<{ code: number; what: string }>): string[] {
  const prevented = (directive(unit, 'Service.RestartPreventExitStatus') ?? '').split(/\s+/).filter((w) => w !== '');
  const want = codes.filter((c) => !restartsSafely(c.what)).map((c) => String(c.code));
  const problems = want.filter((c) => !prevented.includes(c)).map((c) => `exit ${c} needs a person but would be restarted`);
  const safe = codes.filter((c) => restartsSafely(c.what)).map((c) => String(c.code));
  problems.push(...prevented.filter((c) => safe.includes(c)).map((c) => `exit ${c} restarts safely (docs/console.md) but is in RestartPreventExitStatus`));
  problems.push(
    ...prevented
      .filter((c) => !want.includes(c) && !safe.includes(c))
      .map((c) => `RestartPreventExitStatus names ${c}, which docs/console.md does not document`),
  );
  return problems;
}

/** The long flags `baton serve --help` lists, and the variables it reads (`(env: X)`). */
export function helpFlags(help: string): { flags: Set<string>; envVars: Set<string> } {
  const flags = new Set([...help.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1] ?? ''));
  const envVars = new Set([...help.replace(/\s+/g, ' ').matchAll(/\(env: (\w+)\)/g)].map((m) => m[1] ?? ''));
  return { flags, envVars };
}

export function envValues(env: ReadonlyMap<string, EnvVariable>): Map<string, string> {
  return new Map([...env].map(([name, v]) => [name, v.value]));
}

/** Every flag ExecStart passes (with the env file's values in) is a real `baton serve` flag. */
export function flagProblems(unit: UnitFile, env: ReadonlyMap<string, EnvVariable>, help: string): string[] {
  const argv = execArgv(directive(unit, 'Service.ExecStart') ?? '', envValues(env));
  const { flags } = helpFlags(help);
  const problems = argv[1] === 'serve' ? [] : [`ExecStart runs ${argv.slice(0, 2).join(' ')}, not baton serve`];
  return [...problems, ...argv.filter((w) => w.startsWith('--') && !flags.has(w.split('=')[0] ?? w)).map((w) => `${w} is not a baton serve flag`)];
}

/** Every variable documented, every variable ExecStart uses set, every variable set used (by ExecStart or by baton). */
export function envProblems(unit: UnitFile, env: ReadonlyMap<string, EnvVariable>, help: string): string[] {
  const used = new Set(execVariables(directive(unit, 'Service.ExecStart') ?? ''));
  const { envVars } = helpFlags(help);
  const problems: string[] = [];
  for (const [name, v] of env) {
    if (v.doc.length < 20) problems.push(`${name} has no comment saying what it is`);
    if (!used.has(name) && !envVars.has(name)) problems.push(`${name} is set but neither ExecStart nor baton reads it`);
  }
  for (const name of used) if (!env.has(name)) problems.push(`ExecStart uses ${name}, which the environment file does not set`);
  return problems;
}

function flagValue(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i < 0 ? undefined : argv[i + 1];
}

/** LimitNOFILE holds --max-connections of both protocols without baton lowering its budget. */
export function nofileProblems(unit: UnitFile, env: ReadonlyMap<string, EnvVariable>): string[] {
  const argv = execArgv(directive(unit, 'Service.ExecStart') ?? '', envValues(env));
  const requested = Number(flagValue(argv, '--max-connections') ?? 16_384);
  const limitText = directive(unit, 'Service.LimitNOFILE');
  if (limitText === undefined) return ['no LimitNOFILE: the distribution default (often 1024 soft) holds a few hundred connections'];
  const soft = Number(limitText.split(':')[0]);
  const budget = connectionBudget(requested, soft);
  return budget.lowered ? [`LimitNOFILE=${limitText} holds ${budget.maxTotal} connections, not 2 x --max-connections ${requested}`] : [];
}

/** The longest a graceful stop can take by the code's own bounds, for `--drain` ms (Next's close aside). */
export function stopBoundMs(drainMs: number): number {
  return SHUTDOWN_TRANSITION_WAIT_MS + HANDOFF_TIMEOUT_MS + drainMs + STOP_CEILING_SAVE_WAIT_MS + STOP_HTTP_GRACE_MS;
}

export function stopTimeoutProblems(unit: UnitFile, env: ReadonlyMap<string, EnvVariable>): string[] {
  const argv = execArgv(directive(unit, 'Service.ExecStart') ?? '', envValues(env));
  const drainMs = parseDurationFlag(flagValue(argv, '--drain') ?? '2s');
  if (drainMs === null) return [`--drain ${flagValue(argv, '--drain')} is not a duration`];
  const text = directive(unit, 'Service.TimeoutStopSec');
  if (text === undefined) return ['no TimeoutStopSec: the default 90 s of most distributions is not a promise'];
  const bound = stopBoundMs(drainMs);
  const timeout = parseTimeSpan(text);
  const problems = timeout > bound ? [] : [`TimeoutStopSec=${text} is not above the ${bound} ms a graceful stop may take`];
  if (directive(unit, 'Service.KillMode') !== 'mixed') problems.push('KillMode is not mixed: SIGTERM would reach every process of the group, not just baton');
  return problems;
}
