// Turns the sections' results into the markdown tables printed by `npm run bench` (and saved
// next to the JSON in bench/results/), with the targets checked against them.
import { cpus } from 'node:os';
import type { ConsoleLoadResult } from './sections/console-load-section.ts';
import type { ConsoleResult } from './sections/console-section.ts';
import type { FailoverResult, Spread } from './sections/failover-section.ts';
import type { HandoverRow } from './sections/handover-section.ts';
import type { PairsRow } from './sections/pairs-section.ts';
import type { SessionsResult } from './sections/sessions-section.ts';

/** This machine as every benchmark's results name it. */
export function hostMachine(): { cores: number; cpu: string; node: string } {
  return { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version };
}

export interface BenchResults {
  machine: { cores: number; cpu: string; node: string; redis: string; etcd: string };
  date: string;
  seconds: number;
  repeats: number;
  setup: Record<string, string>;
  pairs?: PairsRow[];
  handover?: HandoverRow[];
  sessions?: SessionsResult;
  failover?: FailoverResult;
  console?: ConsoleResult;
  consoleLoad?: ConsoleLoadResult;
}

const x = (r: number | null) => (r === null ? '1 (reference)' : `${r}x`);
const ms = (n: number) => (Number.isFinite(n) ? `${n} ms` : '-');
const fair = (n: number) => (Number.isFinite(n) ? `${n}` : 'some clients never got it');
const table = (head: string[], rows: (string | number)[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

export function markdown(r: BenchResults): string {
  const out: string[] = [];
  out.push(`Machine: ${r.machine.cores} cores, ${r.machine.cpu}, Node ${r.machine.node}, ${r.machine.redis}, ${r.machine.etcd}. ${r.date}.`);
  out.push(
    `Every figure is the median of ${r.repeats} runs of ${r.seconds} s; ratios against Redis${r.pairs ? ' (and against the floor)' : ''} are medians of per-repeat ratios (the systems alternate within each repeat).`,
  );
  if (r.pairs) {
    out.push('\n### 1. Uncontended acquire+release pairs, 50 clients on distinct keys\n');
    out.push(
      table(
        ['system', 'in flight per client', 'pairs/s', 'server CPU/pair', 'pairs/s vs Redis', 'CPU/pair vs Redis', 'CPU/pair vs floor'],
        r.pairs.map((p) => [
          p.system,
          p.depth,
          p.pairsPerSec,
          `${p.serverCpuUsPerPair} us`,
          x(p.pairsPerSecVsRedis),
          x(p.cpuPerPairVsRedis),
          p.cpuPerPairVsFloor !== null ? `${p.cpuPerPairVsFloor}x` : p.floor === p.system ? '1 (reference)' : '-',
        ]),
      ),
    );
    out.push(
      "\nThe floor is a bare Node line server (bench/servers/floor-line-server.ts: a Map of held keys, a token counter, one write per read; no queues, leases or durability) behind the same KeyedClient or SessionClient; each Baton row's CPU/pair is divided by the floor of its protocol.",
    );
  }
  if (r.handover) {
    out.push('\n### 2. Contended handover, 50 clients on one key\n');
    out.push(
      table(
        [
          'system',
          'handovers',
          'handover p50',
          'p99',
          'max',
          'p99 vs Redis 10 ms',
          'fairness (most/fewest grants)',
          'taken back by the releaser',
          'acquire wait p50 / p99 / max',
        ],
        r.handover.map((h) => [
          h.system,
          h.handovers,
          ms(h.p50Ms),
          ms(h.p99Ms),
          ms(h.maxMs),
          x(h.p99VsRedis),
          fair(h.fairness),
          h.selfRegrants,
          `${ms(h.waitP50Ms)} / ${ms(h.waitP99Ms)} / ${ms(h.waitMaxMs)}`,
        ]),
      ),
    );
  }
  if (r.sessions) {
    const s = r.sessions;
    out.push(`\n### 3. ${s.sessions} concurrent sessions, ${s.leaseMs} ms lease, all heartbeating\n`);
    if (s.sessions < s.requested)
      out.push(
        `${s.requested} were asked for; the daemon refused ${s.requested - s.sessions} (too many connections: it caps each protocol to fit its open-file limit).\n`,
      );
    out.push(
      table(
        ['RSS per session', 'server RSS', 'server CPU (heartbeats only)', 'heartbeats/s', 'handover p99 (50 clients) during', 'before the sessions'],
        [
          [
            `${s.rssPerSessionKiB} KiB`,
            `${s.rssBeforeMiB} → ${s.rssWithSessionsMiB} MiB`,
            `${s.serverCpuPercentHeartbeating} % of a core`,
            s.heartbeatsPerSec,
            ms(s.handoverP99MsWith),
            ms(s.handoverP99MsWithout),
          ],
        ],
      ),
    );
  }
  if (r.failover) {
    const f = r.failover;
    const row = (name: string, s: Spread) => [name, ms(s.median), ms(s.min), ms(s.max), s.n];
    out.push(`\n### 4. Failover, 3 nodes, peer-timeout ${f.peerTimeoutMs} ms\n`);
    out.push(
      table(
        ['event', 'median', 'min', 'max', 'runs'],
        [
          row('graceful handoff (API): gap with no active node', f.apiHandoffGapMs),
          row('graceful handoff (SIGTERM): gap with no active node', f.sigtermHandoffGapMs),
          row('kill -9: gap with no active node (last heartbeat → promoted)', f.killGapMs),
          row('kill -9 → a standby reports active (client polls every 10 ms)', f.killPromotionMs),
          row("handoffs: the old active's part of the gap (holding, shipping its last events)", f.handoffSplitMs.pausedMs),
          row("handoffs: the successor's part (promotion: token block stored, serving)", f.handoffSplitMs.promoteMs),
        ],
      ),
    );
  }
  if (r.console) {
    out.push("\n### 5. The dashboard's cost (handover, 50 clients on one key, 10,000 locks held, 2,000 pairs/s churn)\n");
    if ('skipped' in r.console) out.push(`Skipped: ${r.console.skipped}.`);
    else {
      out.push(
        table(
          ['condition', 'handover p50', 'handover p99', 'p99 vs none', 'server CPU', 'churn pairs/s'],
          r.console.rows.map((c) => [c.condition, ms(c.p50Ms), ms(c.p99Ms), x(c.p99VsNone), `${c.serverCpuPercent} %`, c.churnPairsPerSec]),
        ),
      );
      out.push(`\nDashboard time to first data (navigation start to first snapshot rendered, under the load): median ${r.console.firstDataMs} ms.`);
      const parts = r.console.firstDataParts;
      if (parts !== undefined) {
        const at = (v: number | null) => (v === null ? '-' : `${v} ms`);
        out.push(
          `Where it went (medians, from navigation start): HTML answered ${at(parts.responseEnd)}, document parsed ${at(parts.domContentLoaded)}, event stream opened ${at(parts.streamOpen)}, snapshot arrived ${at(parts.snapshot)}, first rows drawn ${at(parts.firstData)}.`,
        );
      }
      if (r.console.firstDataAllMs !== undefined) out.push(`Every page's first data (ms, in the order opened): ${r.console.firstDataAllMs.join(', ')}.`);
    }
  }
  if (r.consoleLoad) {
    const c = r.consoleLoad;
    out.push(`\n### 5b. The console's read side at ${c.locks.toLocaleString('en-US')} locks: canary acquire+release pairs (server: ${c.server}, ${c.mode})\n`);
    out.push(
      table(
        ['condition', 'canary p50', 'p99', 'max', 'p99 vs no load', 'pairs', 'server RSS before → peak', 'load'],
        c.rows.map((row) => [
          row.condition,
          ms(row.p50Ms),
          ms(row.p99Ms),
          ms(row.maxMs),
          x(row.p99VsNone),
          row.pairs,
          `${row.rssBeforeMiB} → ${row.rssPeakMiB} MiB`,
          row.condition === 'no load'
            ? '-'
            : row.condition.includes('streams')
              ? `${row.loadCount} streams open at the end`
              : `${row.loadCount} polls answered`,
        ]),
      ),
    );
  }
  const checked = targets(r);
  if (checked.length > 0) {
    out.push('\n### Targets\n');
    out.push(
      table(
        ['target', 'measured', 'met'],
        checked.map((t) => [t.target, t.measured, t.met ? 'yes' : '**no**']),
      ),
    );
  }
  return out.join('\n');
}

export function targets(r: BenchResults): { target: string; measured: string; met: boolean }[] {
  const t: { target: string; measured: string; met: boolean }[] = [];
  for (const p of r.pairs ?? []) {
    if (!p.system.startsWith('Baton keyed') || p.pairsPerSecVsRedis === null || p.cpuPerPairVsRedis === null) continue;
    t.push({ target: `(1) ${p.system}, ${p.depth} in flight: pairs/s ≥ Redis`, measured: `${p.pairsPerSecVsRedis}x`, met: p.pairsPerSecVsRedis >= 1 });
    t.push({ target: `(1) ${p.system}, ${p.depth} in flight: server CPU/pair ≤ Redis`, measured: `${p.cpuPerPairVsRedis}x`, met: p.cpuPerPairVsRedis <= 1 });
  }
  const keyed = r.handover?.find((h) => h.system.startsWith('Baton keyed'));
  if (keyed) {
    t.push({ target: '(2) Baton keyed handover p99 < 1 ms at 50 clients', measured: ms(keyed.p99Ms), met: keyed.p99Ms < 1 });
    t.push({ target: '(2) fair within 10 % (most/fewest grants ≤ 1.1)', measured: fair(keyed.fairness), met: keyed.fairness <= 1.1 });
  }
  if (r.sessions) {
    t.push({ target: '(3) under 10 KiB RSS per session', measured: `${r.sessions.rssPerSessionKiB} KiB`, met: r.sessions.rssPerSessionKiB < 10 });
    t.push({ target: '(3) handover p99 < 5 ms during the sessions', measured: ms(r.sessions.handoverP99MsWith), met: r.sessions.handoverP99MsWith < 5 });
  }
  if (r.failover) {
    const f = r.failover;
    const worst = Math.max(f.apiHandoffGapMs.max, f.sigtermHandoffGapMs.max);
    t.push({ target: '(4) graceful handoff gap < 100 ms (worst run)', measured: ms(worst), met: worst < 100 });
    t.push({
      target: `(4) kill -9 promotion within peer-timeout + 200 ms (${f.peerTimeoutMs + 200} ms, worst run)`,
      measured: ms(f.killGapMs.max),
      met: f.killGapMs.max <= f.peerTimeoutMs + 200,
    });
  }
  const streams = r.consoleLoad?.rows.find((row) => row.condition.includes('streams'));
  if (streams)
    t.push({ target: '(5) canary p99 < 5 ms with 50 never-reading event streams at 100,000 locks', measured: ms(streams.p99Ms), met: streams.p99Ms < 5 });
  return t;
}
