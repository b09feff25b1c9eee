// Section 3: a standby joins a large table under churn. A 2-node cluster (peer-timeout 1 s):
// `a` starts alone and takes `locks` locks (600 s leases), two clients hand 200 keys back and
// forth at `rate` pairs/s, then `b` starts and streams the snapshot. Figures:
//   - time to in sync: b's "following the active node" log line to its "synced from the active
//     node" line (the last part applied, the stream caught up);
//   - the active's longest event-loop block while b joined: the largest per-second maximum of
//     perf_hooks.monitorEventLoopDelay (5 ms resolution) that a reports in GET /api/v1/cluster
//     (loopDelayMs), over the seconds of the join;
//   - handover p99 during the join, as the churning client sees it: release sent to the queued
//     client's grant received (the engine's own handover is synchronous; a blocked loop shows
//     up here, in the time before the release is read);
//   - the same loop-delay and handover figures over BASELINE_SECONDS of the same churn just
//     before b starts (what the machine and the table cost without a join), the longest GC pause
//     per second (gcPauseMs in the cluster view), and the active's own account of the stream
//     (its "snapshot streamed to a standby" log line: longest slice, waits for the link to drain);
//   - RSS (now and peak, VmHWM) of both processes once b is in sync; failovers and phases seen.
import { readFileSync } from 'node:fs';
import { startCluster, waitFor, type NodeProcess } from '../../server/testing/cluster-harness.ts';
import { fillLocks, startChurn } from '../../server/testing/lock-load.ts';
import { percentile, round } from '../stats.ts';

const BASELINE_SECONDS = 5;

export interface JoinResult {
  locks: number;
  pairsPerSec: number;
  fillSeconds: number;
  inSyncMs: number;
  parts: number;
  activeMaxLoopDelayMs: number;
  /** Per second of the join, a's longest delay (ms). */
  activeLoopDelayMs: number[];
  /** Per second of the join, a's longest GC pause (ms). */
  activeGcPauseMs: number[];
  /** The active's log line at the end of the stream. */
  longestSliceMs: number;
  drainWaits: number;
  /** The standby's own per-second figures over the same seconds (its loop does the applying). */
  standbyLoopDelayMs: number[];
  standbyGcPauseMs: number[];
  /**
   * Per second of the join, each side's longest block in CPU time of its loop's thread (loopBusyMs:
   * work and GC pauses, not the wait for a core) and the same less GC (loopWorkMs): on a loaded
   * machine the wall-clock delay above is mostly waiting for a core.
   */
  activeBusyMs: number[];
  activeWorkMs: number[];
  standbyBusyMs: number[];
  standbyWorkMs: number[];
  /** b's "peer link down" log lines during the join: 0 when it went through at the first try (a cut-off standby starts over). */
  standbyLinkDowns: number;
  baseline: { maxLoopDelayMs: number; loopDelayMs: number[]; gcPauseMs: number[]; handoverP99Ms: number; handovers: number };
  handovers: number;
  handoverP50Ms: number;
  handoverP99Ms: number;
  handoverMaxMs: number;
  churnPairsDuringJoin: number;
  unexpectedReplies: number;
  failovers: number;
  activePhases: string[];
  rssMiB: { active: number; activePeak: number; standby: number; standbyPeak: number };
}

function memMiB(node: NodeProcess): { rss: number; peak: number } {
  const pid = node.pid;
  if (pid === undefined) throw new Error(`node ${node.id} is not running`);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

function logTime(node: NodeProcess, msg: string, since: number): number | null {
  const e = node
    .logEntries()
    .filter((x) => x.msg === msg && Number(x.time) >= since)
    .at(-1);
  return e === undefined ? null : Number(e.time);
}

export async function joinSection(locks: number, rate: number): Promise<JoinResult> {
  const cluster = await startCluster({ nodes: 2, start: ['a'], teardownGraceMs: 5_000, startTimeoutMs: 30_000 });
  try {
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a active alone' });
    const fill0 = performance.now();
    await fillLocks(a.ports.lock, locks, 'bench/join');
    const fillSeconds = round((performance.now() - fill0) / 1_000, 1);
    const churn = await startChurn(a.ports.lock, rate);
    // Let the churn settle and the fill's own loop delays leave the per-second window.
    await new Promise((r) => setTimeout(r, 3_000));
    const baseHandovers = churn.live.handoverMs.length;
    await new Promise((r) => setTimeout(r, BASELINE_SECONDS * 1_000));
    const baseView = await a.cluster();
    const baseSamples = churn.live.handoverMs.slice(baseHandovers);
    const baseLoop = (baseView.loopDelayMs ?? []).slice(-BASELINE_SECONDS - 1, -1);
    const baseline = {
      maxLoopDelayMs: Math.max(...baseLoop),
      loopDelayMs: baseLoop,
      gcPauseMs: (baseView.gcPauseMs ?? []).slice(-BASELINE_SECONDS - 1, -1),
      handoverP99Ms: round(percentile(baseSamples, 99)),
      handovers: baseSamples.length,
    };
    const failoversBefore = (await a.cluster()).failovers.length;
    const handoversBefore = churn.live.handoverMs.length;
    const pairsBefore = churn.live.pairs;
    const phases = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        phases.add((await a.cluster().catch(() => ({ phase: 'unreachable' }))).phase);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const since = Date.now();
    const t0 = performance.now();
    await b.start();
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.inSync === true, { timeoutMs: 300_000, intervalMs: 50, what: 'b in sync' });
    const joinSeconds = (performance.now() - t0) / 1_000;
    const during = churn.live.handoverMs.slice(handoversBefore);
    const churnPairsDuringJoin = churn.live.pairs - pairsBefore;
    watching = false;
    await watcher;
    const [viewA, viewB] = [await a.cluster(), await b.cluster()];
    const seconds = Math.ceil(joinSeconds) + 1;
    const activeLoopDelayMs = (viewA.loopDelayMs ?? []).slice(-seconds);
    const activeGcPauseMs = (viewA.gcPauseMs ?? []).slice(-seconds);
    const streamed = a
      .logEntries()
      .filter((x) => x.msg === 'snapshot streamed to a standby')
      .at(-1);
    const followed = logTime(b, 'following the active node', since);
    const synced = b
      .logEntries()
      .filter((x) => x.msg === 'synced from the active node' && Number(x.time) >= since)
      .at(-1);
    const result = await churn.stop();
    const [ma, mb] = [memMiB(a), memMiB(b)];
    return {
      locks,
      pairsPerSec: rate,
      fillSeconds,
      inSyncMs: followed === null || synced === undefined ? Number.NaN : Number(synced.time) - followed,
      parts: Number(synced?.parts ?? Number.NaN),
      activeMaxLoopDelayMs: Math.max(...activeLoopDelayMs),
      activeLoopDelayMs,
      activeGcPauseMs,
      standbyLoopDelayMs: (viewB.loopDelayMs ?? []).slice(-seconds),
      standbyGcPauseMs: (viewB.gcPauseMs ?? []).slice(-seconds),
      activeBusyMs: (viewA.loopBusyMs ?? []).slice(-seconds),
      activeWorkMs: (viewA.loopWorkMs ?? []).slice(-seconds),
      standbyBusyMs: (viewB.loopBusyMs ?? []).slice(-seconds),
      standbyWorkMs: (viewB.loopWorkMs ?? []).slice(-seconds),
      standbyLinkDowns: b.logEntries().filter((x) => x.msg === 'peer link down' && Number(x.time) >= since).length,
      longestSliceMs: Number(streamed?.longestSliceMs ?? Number.NaN),
      drainWaits: Number(streamed?.drainWaits ?? Number.NaN),
      baseline,
      handovers: during.length,
      handoverP50Ms: round(percentile(during, 50)),
      handoverP99Ms: round(percentile(during, 99)),
      handoverMaxMs: round(Math.max(...during)),
      churnPairsDuringJoin,
      unexpectedReplies: result.unexpected.length,
      failovers: viewA.failovers.length - failoversBefore,
      activePhases: [...phases],
      rssMiB: { active: ma.rss, activePeak: ma.peak, standby: mb.rss, standbyPeak: mb.peak },
    };
  } finally {
    await cluster.close();
  }
}
