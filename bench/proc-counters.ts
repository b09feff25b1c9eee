// What a process did, from Linux's /proc: CPU time, read and write syscalls, and context
// switches (voluntary: it slept waiting for something; involuntary: the scheduler took its core),
// and how idle the whole machine was. bench/etcd-turns.ts takes them before and after a run and
// divides the difference by the pairs done.
import { readFileSync } from 'node:fs';
import { processCpuMs } from './baton-process.ts';

export interface ProcessCounters {
  /** User + system CPU time, all threads, ms (10 ms ticks). */
  cpuMs: number;
  /** /proc/PID/io syscr and syscw: read- and write-like syscalls (read, recv, write, send, ...), all threads. */
  reads: number;
  writes: number;
  /**
   * /proc/PID/status voluntary_ctxt_switches and nonvoluntary_ctxt_switches: of the main thread
   * only (the kernel prints the thread's own counts there), which in Node is the event loop's.
   */
  voluntary: number;
  involuntary: number;
}

const field = (text: string, key: string): number => {
  const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
  if (m === null) throw new Error(`no ${key} in /proc`);
  return Number(m[1]);
};

export function processCounters(pid: number): ProcessCounters {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuMs: processCpuMs(pid),
    reads: field(io, 'syscr'),
    writes: field(io, 'syscw'),
    voluntary: field(status, 'voluntary_ctxt_switches'),
    involuntary: field(status, 'nonvoluntary_ctxt_switches'),
  };
}

/** The machine's CPU time so far, all cores, in ticks: idle (idle + iowait) and the total. */
export interface MachineTicks {
  idle: number;
  total: number;
}

export function machineTicks(): MachineTicks {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice, so the total stops at steal.
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (line.startsWith('cpu ') === false || f.length < 8 || f.some((x) => !Number.isFinite(x))) throw new Error(`unexpected /proc/stat: ${line}`);
  return { idle: (f[3] ?? 0) + (f[4] ?? 0), total: f.reduce((s, x) => s + x, 0) };
}

/** Share of the machine's CPU time that was idle between two readings, in %. */
export function idlePercent(before: MachineTicks, after: MachineTicks): number {
  const total = after.total - before.total;
  return total <= 0 ? 0 : ((after.idle - before.idle) / total) * 100;
}
