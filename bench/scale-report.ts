// The scale section's markdown tables and its two charts (docs/scale-memory.svg,
// docs/scale-cpu.svg), from a ScaleResult.
import type { CpuComparison } from './scale-held.ts';
import { failed, type ScaleResult } from './sections/scale-section.ts';
import { lineChartSvg } from './scale-svg.ts';

const table = (head: string[], rows: (string | number)[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const n = (x: number) => x.toLocaleString('en-US');
const list = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');

export function scaleMarkdown(r: ScaleResult): string {
  const out: string[] = ['\n### 6. Scale: cost as the table grows\n'];
  if (r.held) {
    out.push(
      `Held keyed locks (600 s leases, pipelined on one connection; Redis \`SET key value NX PX\` the same way). RSS growth since before the first fill (Baton ${r.held.baseRssMiB.baton} MiB, Redis ${r.held.baseRssMiB.redis} MiB); grant CPU: 50 raw keyed connections, 16 pipelined, on other keys, against a daemon holding 1,000 locks, median of ${r.options.repeats} alternating runs of ${r.options.seconds} s.\n`,
    );
    out.push(
      table(
        [
          'locks held',
          'Baton RSS (peak)',
          'Baton B/lock',
          'Redis RSS',
          'Redis B/lock',
          'Baton / Redis',
          'CPU/pair (1,000 held)',
          'CPU/pair vs 1,000',
          'pairs/s',
          'fill s (Baton / Redis)',
        ],
        r.held.rows.map((h) => [
          n(h.locks),
          `${h.batonRssMiB} MiB (${h.batonPeakMiB})`,
          h.batonBytesPerLock > 0 ? h.batonBytesPerLock : `${h.batonBytesPerLock} (inside the heap's resizing noise)`,
          `${h.redisRssMiB} MiB`,
          h.redisBytesPerLock,
          h.batonBytesPerLock > 0 ? `${h.batonVsRedis}x` : '-',
          `${h.cpuUsPerPair} us (${h.referenceCpuUsPerPair} us)`,
          `${h.cpuVsReference}x`,
          n(h.pairsPerSec),
          `${h.batonFillSeconds} / ${h.redisFillSeconds}`,
        ]),
      ),
    );
    // Older result files (before the check was added) have no emptyVsReference.
    const e: CpuComparison | undefined = r.held.emptyVsReference;
    if (e !== undefined)
      out.push(
        `\nThe same comparison before the fill (the daemon empty against the 1,000-lock one, the noise floor of two like daemons on this machine): ${e.cpuUsPerPair} us against ${e.referenceCpuUsPerPair} us, ${e.cpuVsReference}x.`,
      );
  }
  if (r.waiters) {
    out.push('\nWaiting requests, one per held lock, 5,000 per connection (a fresh daemon per size):\n');
    out.push(
      table(
        ['waiters', 'RSS held only', 'RSS with waiters', 'B/waiter', 'queued in'],
        r.waiters.map((w) => [n(w.waiters), `${w.heldRssMiB} MiB`, `${w.withWaitersRssMiB} MiB`, w.bytesPerWaiter, `${w.queueSeconds} s`]),
      ),
    );
  }
  if (r.sessions) {
    out.push(
      `\nHeartbeating session connections, each holding its own lock, ${r.options.sessionLeaseMs} ms lease, heartbeat every lease/4 (open-file limit ${r.openFileLimit.soft}, hard ${r.openFileLimit.hard}):\n`,
    );
    out.push(
      table(
        [
          'sessions granted (open at the end)',
          'claims',
          'RSS per open session',
          'server RSS',
          'CPU per heartbeat',
          'heartbeats/s',
          'server CPU',
          'handover p99 during (before)',
        ],
        r.sessions.map((s) => [
          `${n(s.sessions)}${s.sessions < s.requested ? ` of ${n(s.requested)}` : ''} (${n(s.liveAtEnd ?? s.sessions)})`,
          s.mode,
          `${s.rssPerLiveSessionKiB ?? s.rssPerSessionKiB} KiB`,
          `${s.rssBeforeMiB} → ${s.rssWithSessionsMiB} MiB`,
          `${s.cpuUsPerHeartbeat} us`,
          n(s.heartbeatsPerSec),
          `${s.serverCpuPercentHeartbeating} %`,
          `${s.handoverP99MsWith} ms (${s.handoverP99MsWithout} ms)`,
        ]),
      ),
    );
  }
  if (r.join) {
    out.push('\nA standby joins the table under 2,000 pairs/s of handover churn (2 nodes, peer-timeout 1 s; sections/join-section.ts):\n');
    out.push(
      table(
        [
          'locks',
          'time to in sync',
          'active longest block (GC)',
          'standby longest block (GC)',
          'handover p50 / p99 / max during',
          'baseline block; p99',
          'failovers',
          'RSS active / standby (peak)',
        ],
        r.join.map((j) =>
          failed(j)
            ? [n(j.locks), `did not finish: ${j.error}`, '-', '-', '-', '-', '-', '-']
            : [
                n(j.locks),
                `${(j.inSyncMs / 1000).toFixed(1)} s (${j.parts} parts)`,
                `${j.activeMaxLoopDelayMs} ms (${Math.max(...j.activeGcPauseMs)} ms)`,
                `${Math.max(...j.standbyLoopDelayMs)} ms (${Math.max(...j.standbyGcPauseMs)} ms)`,
                `${j.handoverP50Ms} / ${j.handoverP99Ms} / ${j.handoverMaxMs} ms`,
                `${j.baseline.maxLoopDelayMs} ms; ${j.baseline.handoverP99Ms} ms`,
                j.failovers,
                `${j.rssMiB.active} / ${j.rssMiB.standby} MiB (${j.rssMiB.activePeak} / ${j.rssMiB.standbyPeak})`,
              ],
        ),
      ),
    );
    for (const j of r.join)
      if (!failed(j)) out.push(`\n${n(j.locks)}: active per-second maxima ${list(j.activeLoopDelayMs)} ms; standby ${list(j.standbyLoopDelayMs)} ms.`);
  }
  if (r.failover) {
    out.push('\nkill -9 of the active holding the table (2 nodes, peer-timeout 1 s, the standby synced and at rest):\n');
    out.push(
      table(
        ['locks', 'kill → standby active', 'gap it records', 'goal (peer-timeout + 200 ms)', 'locks kept', 'join before it'],
        r.failover.map((f) =>
          failed(f)
            ? [n(f.locks), `did not finish: ${f.error}`, '-', '-', '-', '-']
            : [
                n(f.locks),
                `${f.killPromotionMs} ms`,
                `${f.killGapMs} ms`,
                f.killPromotionMs <= f.peerTimeoutMs + 200 ? 'met' : 'missed',
                `${n(f.locksKept)} of ${n(f.locks)}`,
                `${f.joinSeconds} s`,
              ],
        ),
      ),
    );
  }
  return out.join('\n');
}

/**
 * Per-item bytes that can be drawn: from 100,000 items up. Below that the growth (about 5 MiB for
 * 10,000 locks) is inside the few MiB a Node heap resizes by between two readings (it even reads
 * negative); the table keeps those rows and says so.
 */
const CHART_FROM = 100_000;
const drawable = (points: Array<[number, number]>) => points.filter(([x, y]) => x >= CHART_FROM && y > 0);

/** The charts, by file name under docs/ (none when the held part did not run). */
export function scaleCharts(r: ScaleResult): Record<string, string> {
  if (!r.held) return {};
  const rows = r.held.rows;
  const memory = lineChartSvg({
    title: 'Bytes per held lock and per waiter as the table grows (RSS growth)',
    xLabel: 'locks held (log scale)',
    yLabel: 'bytes',
    series: [
      { name: 'Baton, per held keyed lock', color: '#1f77b4', points: drawable(rows.map((h) => [h.locks, h.batonBytesPerLock])) },
      { name: 'Redis, per SET NX PX lock', color: '#d62728', points: drawable(rows.map((h) => [h.locks, h.redisBytesPerLock])) },
      ...(r.waiters && r.waiters.length > 0
        ? [{ name: 'Baton, per waiting request', color: '#2ca02c', points: drawable(r.waiters.map((w): [number, number] => [w.waiters, w.bytesPerWaiter])) }]
        : []),
    ],
    goal: { y: 100, label: 'moonshot: 100 B' },
  });
  const cpu = lineChartSvg({
    title: 'Grant CPU per pair with the table held, over the same with 1,000',
    xLabel: 'locks held (log scale)',
    yLabel: 'CPU per pair / CPU per pair at 1,000 locks',
    series: [{ name: 'Baton (median of alternating runs)', color: '#1f77b4', points: rows.map((h) => [h.locks, h.cpuVsReference]) }],
    goal: { y: 1.1, label: 'goal: within 10 %' },
  });
  return { 'scale-memory.svg': memory, 'scale-cpu.svg': cpu };
}
