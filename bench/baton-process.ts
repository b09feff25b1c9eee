// Starts `baton serve` as a child process on free ports with a throwaway data dir, and reads
// its CPU time from /proc, so benchmarks measure the server's own cost apart from the load
// generator's.
import { readStartedPorts } from '../server/testing/start-line.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATON_BIN, serveArgs } from '../server/testing/serve-args.ts';

export interface BatonProcess {
  child: ChildProcess;
  lockPort: number;
  sessionPort: number;
  httpPort: number;
  /** User + system CPU time of the server process so far, in milliseconds. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const TICKS_PER_SECOND = 100; // Linux USER_HZ

export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of /proc/pid/stat (utime, stime) are at 11 and 12 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * Set by `npm run bench -- --cpu-prof <dir>`: every baton child then runs under
 * `node --cpu-prof` and writes its profile into that dir when it exits.
 */
export const batonProfile = { dir: undefined as string | undefined };

/**
 * `console: true` serves the operator console too (needs `npm run build`); the core figures leave
 * it off. `bin`: another checkout's bin/baton (a before/after comparison).
 */
export async function startBaton(extraArgs: string[] = [], options: { console?: boolean; bin?: string } = {}): Promise<BatonProcess> {
  if (options.console !== true) extraArgs = ['--no-console', ...extraArgs];
  const dataDir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const bin = options.bin ?? BATON_BIN;
  const profile = batonProfile.dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', batonProfile.dir];
  const child = spawn(
    process.execPath,
    [
      ...profile,
      bin,
      ...serveArgs(dataDir),

      '--log-level',
      'warn',
      '--drain',
      '0ms',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ports = await readStartedPorts(child);
  const pid = child.pid as number;
  return {
    child,
    ...ports,
    cpuMs: () => processCpuMs(pid),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
