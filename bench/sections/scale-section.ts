// Section 6 (`npm run bench:scale`, or `npm run bench -- --only scale`): how cost grows with the
// table (issue 29's proof). Parts, each selectable with --scale-only:
//   held      bytes per held keyed lock, Baton and Redis side by side, and grant CPU per pair
//             against a daemon holding 1,000 locks, at each of --scale-sizes (../scale-held.ts)
//   waiters   bytes per waiting request at each size up to 1,000,000 (../scale-waiters.ts)
//   sessions  heartbeating session connections, seed protocol and resumable claims: RSS per
//             session, CPU per heartbeat, handover p99 meanwhile (sessions-section.ts at each of
//             --scale-sessions, capped by the open-file limit)
//   join      a standby joins each table of 1,000,000 locks or more under 2,000 pairs/s (join-section.ts)
//   failover  kill -9 of an active holding each such table (../scale-failover.ts)
import { execFileSync } from 'node:child_process';
import { tableFailover, type TableFailover } from '../scale-failover.ts';
import { heldSection, type HeldResult } from '../scale-held.ts';
import { type WaiterRow, waitersSection } from '../scale-waiters.ts';
import { round } from '../stats.ts';
import { joinSection, type JoinResult } from './join-section.ts';
import { type SessionsResult, sessionsSection } from './sessions-section.ts';

export const SCALE_PARTS = ['held', 'waiters', 'sessions', 'join', 'failover'] as const;
export type ScalePart = (typeof SCALE_PARTS)[number];

export interface ScaleOptions {
  parts: ScalePart[];
  sizes: number[];
  /** Waiter counts: the sizes up to this. */
  maxWaiters: number;
  sessions: number[];
  sessionLeaseMs: number;
  /** Join and failover tables: the sizes from this up. */
  minClusterSize: number;
  seconds: number;
  repeats: number;
}

export interface SessionRow extends SessionsResult {
  mode: 'seed' | 'resumable';
  /** Server CPU per heartbeat answered (us): its CPU share over the heartbeats per second. */
  cpuUsPerHeartbeat: number;
  /**
   * Sessions still open when the holders stopped: granted ones can still lose their lease (a
   * heartbeat late on a loaded machine) and be closed by the server. Memory per session is
   * counted over these, not over the grants.
   */
  liveAtEnd: number;
  rssPerLiveSessionKiB: number;
}

export interface ScaleResult {
  options: ScaleOptions;
  /** The open-file limit (soft, hard) this process and its children had: the cap on sessions. */
  openFileLimit: { soft: number; hard: number };
  held?: HeldResult;
  waiters?: WaiterRow[];
  sessions?: SessionRow[];
  join?: Array<JoinResult | PartFailed>;
  failover?: Array<TableFailover | PartFailed>;
}

/** A join or failover run that did not finish (the standby never got in sync, ...): kept as a figure. */
export interface PartFailed {
  locks: number;
  error: string;
}

export const failed = (x: object): x is PartFailed => 'error' in x;

async function orFailed<T>(locks: number, run: () => Promise<T>, say: (text: string) => void): Promise<T | PartFailed> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    say(`scale: the run at ${locks} locks failed: ${message}`);
    return { locks, error: message };
  }
}

export function openFileLimit(): { soft: number; hard: number } {
  const sh = (flag: string) => Number(execFileSync('sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).trim());
  return { soft: sh('-Sn'), hard: sh('-Hn') };
}

/** File descriptors the bench keeps beside the sessions (the handover clients, the daemon's own files). */
const FD_HEADROOM = 1_500;

/** `saved`: called with the result so far after each part (a long run keeps what it measured). */
export async function scaleSection(options: ScaleOptions, say: (text: string) => void, saved: (r: ScaleResult) => void): Promise<ScaleResult> {
  const limit = openFileLimit();
  const result: ScaleResult = { options, openFileLimit: limit };
  const has = (p: ScalePart) => options.parts.includes(p);
  if (has('held')) {
    result.held = await heldSection(options.sizes, options.seconds, options.repeats, say);
    saved(result);
  }
  if (has('waiters')) {
    result.waiters = await waitersSection(
      options.sizes.filter((s) => s <= options.maxWaiters),
      say,
    );
    saved(result);
  }
  if (has('sessions')) {
    // Each session is one open file in the daemon and one in the holder process (children of
    // this one, with its limit): a count past the limit is measured at what fits, and said so.
    result.sessions = [];
    for (const wanted of options.sessions) {
      const count = Math.min(wanted, limit.soft - FD_HEADROOM);
      if (count < wanted) say(`scale: ${wanted} sessions do not fit the open-file limit (ulimit -n ${limit.soft}, hard ${limit.hard}): measuring ${count}`);
      for (const mode of ['seed', 'resumable'] as const) {
        say(`scale: ${count} ${mode} sessions, ${options.sessionLeaseMs} ms lease`);
        const r = await sessionsSection(count, options.sessionLeaseMs, options.seconds, options.repeats, mode === 'resumable');
        const cpuUsPerHeartbeat = r.heartbeatsPerSec > 0 ? round((r.serverCpuPercentHeartbeating * 10_000) / r.heartbeatsPerSec) : Number.NaN;
        const liveAtEnd = r.requested - (r.holderCounts.closedEarly ?? 0);
        const rssPerLiveSessionKiB = round(((r.rssWithSessionsMiB - r.rssBeforeMiB) * 1024) / liveAtEnd, 2);
        if (liveAtEnd < r.sessions) say(`scale: ${r.sessions - liveAtEnd} of ${r.sessions} sessions lost their lease before the end (late heartbeats)`);
        result.sessions.push({ ...r, mode, cpuUsPerHeartbeat, liveAtEnd, rssPerLiveSessionKiB });
        saved(result);
      }
    }
  }
  // Per size, the join and then the kill -9, so the smaller table's figures are in before the larger one's run.
  if (has('join')) result.join = [];
  if (has('failover')) result.failover = [];
  for (const size of options.sizes.filter((s) => s >= options.minClusterSize)) {
    if (result.join) {
      say(`scale: a standby joins ${size} locks under 2,000 pairs/s`);
      result.join.push(await orFailed(size, () => joinSection(size, 2_000), say));
      saved(result);
    }
    if (result.failover) {
      say(`scale: kill -9 of an active holding ${size} locks`);
      result.failover.push(await orFailed(size, () => tableFailover(size), say));
      saved(result);
    }
  }
  return result;
}
