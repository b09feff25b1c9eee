// The side-by-side table of bench/etcd-mode.ts: the default mode and etcd mode, each figure with
// etcd mode's ratio to the default, and what etcd mode asks of etcd.
import type { EtcdRates } from './etcd-requests.ts';

export type ModeName = 'default' | 'etcd';

export interface LoadRow {
  load: string;
  pairsPerSec: number;
  /** Wall time of one pair from its acquire to its release answered, as its client sees it, ms. */
  msPerPair: number;
  /** Server CPU per pair, µs: the active's, and the two standbys' together. */
  activeUsPerPair: number;
  standbysUsPerPair: number;
}

export interface EtcdModeResults {
  machine: { cores: number; cpu: string; node: string };
  /** 1, 5 and 15 minutes, when the figures were taken. */
  loadAverage: number[];
  date: string;
  seconds: number;
  repeats: number;
  peerTimeoutMs: number;
  etcdLeaseTtlS: number;
  pairs: Record<ModeName, LoadRow[]>;
  handoverP99Ms: Record<ModeName, number>;
  /** null when no round completed; `errors`: rounds after which the cluster did not come back (that mode's later rounds skipped). */
  failoverMs: Record<ModeName, { median: number | null; max: number | null; runs: number[]; errors: string[] }>;
  etcdIdle: EtcdRates;
  etcdUnderLoad: EtcdRates | null;
}

const ratio = (etcd: number, base: number) => (base === 0 ? 'n/a' : `${((etcd / base) * 100).toFixed(1)} %`);
const methods = (r: EtcdRates) =>
  Object.entries(r.byMethod)
    .sort(([, x], [, y]) => y - x)
    .map(([m, n]) => `${m} ${n}`)
    .join(', ') || 'none';

const failover = (f: EtcdModeResults['failoverMs'][ModeName]) =>
  `${f.median ?? '-'} / ${f.max ?? '-'}, ${f.runs.length}${f.errors.length > 0 ? ` (+${f.errors.length} failed)` : ''}`;

export function formatEtcdModeReport(r: EtcdModeResults): string {
  const lines = [
    `## Default mode vs etcd mode (${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.machine.cores} cores ${r.machine.cpu}, Node ${r.machine.node}, load average ${r.loadAverage.join(' ')}; ${r.seconds} s runs, median of ${r.repeats}, alternating)`,
    '',
    '| keyed pairs on the active | default pairs/s | etcd pairs/s | etcd/default | default ms/pair | etcd ms/pair | default µs CPU/pair (active / standbys) | etcd µs CPU/pair (active / standbys) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const d of r.pairs.default) {
    const e = r.pairs.etcd.find((x) => x.load === d.load);
    if (e === undefined) continue;
    lines.push(
      `| ${d.load} | ${d.pairsPerSec} | ${e.pairsPerSec} | ${ratio(e.pairsPerSec, d.pairsPerSec)} | ${d.msPerPair} | ${e.msPerPair} | ${d.activeUsPerPair} / ${d.standbysUsPerPair} | ${e.activeUsPerPair} / ${e.standbysUsPerPair} |`,
    );
  }
  lines.push(
    '',
    '| | default | etcd |',
    '|---|---:|---:|',
    `| handover p99, 50 clients on one key (ms) | ${r.handoverP99Ms.default} | ${r.handoverP99Ms.etcd} |`,
    `| failover after kill -9 of the active, median / max (ms), rounds | ${failover(r.failoverMs.default)} | ${failover(r.failoverMs.etcd)} |`,
    `| what bounds it | peer timeout ${r.peerTimeoutMs} ms | etcd lease TTL ${r.etcdLeaseTtlS} s |`,
    '',
    `etcd requests that the etcd-mode cluster (3 nodes) adds, from etcd's /metrics (gRPC messages received by the 3 members; raft proposals committed):`,
    `- idle: ${r.etcdIdle.requestsPerSec} requests/s (${methods(r.etcdIdle)}); ${r.etcdIdle.proposalsPerSec} proposals/s`,
    ...(['default', 'etcd'] as const).flatMap((m) => r.failoverMs[m].errors.map((e) => `- ${m} mode, a failover round failed: ${e}`)),
    r.etcdUnderLoad === null
      ? '- under load: not measured'
      : `- under the 50 x 16 load: ${r.etcdUnderLoad.requestsPerSec} requests/s (${methods(r.etcdUnderLoad)}); ${r.etcdUnderLoad.proposalsPerSec} proposals/s`,
  );
  return lines.join('\n');
}
