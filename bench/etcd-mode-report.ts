// The side-by-side table of bench/etcd-mode.ts: the default mode and each etcd-mode cluster (one
// per in-sync bound asked for), each figure with that etcd cluster's ratio to the default, and
// what the etcd mode asks of etcd.
import type { EtcdRates } from './etcd-requests.ts';

/** 'default', or an etcd-mode cluster's name (etcdModeName). */
export type ModeName = string;

/** 'etcd' with the node's default in-sync bound, 'etcd in-sync N' with `--etcd-in-sync N`. */
export function etcdModeName(inSync: number | null): ModeName {
  return inSync === null ? 'etcd' : `etcd in-sync ${inSync}`;
}

export interface LoadRow {
  load: string;
  pairsPerSec: number;
  /** Wall time of one pair from its acquire to its release answered, as its client sees it, ms. */
  msPerPair: number;
  /** Server CPU per pair, µs: the active's, and the two standbys' together. */
  activeUsPerPair: number;
  standbysUsPerPair: number;
}

type Failover = { median: number | null; max: number | null; runs: number[]; errors: string[] };

export interface EtcdModeResults {
  machine: { cores: number; cpu: string; node: string };
  /** 1, 5 and 15 minutes, when the figures were taken. */
  loadAverage: number[];
  date: string;
  seconds: number;
  repeats: number;
  peerTimeoutMs: number;
  etcdLeaseTtlS: number;
  /** 'default' first, then each etcd-mode cluster. */
  modes: ModeName[];
  pairs: Record<ModeName, LoadRow[]>;
  handoverP99Ms: Record<ModeName, number>;
  /** null when no round completed; `errors`: rounds after which the cluster did not come back (that mode's later rounds skipped). */
  failoverMs: Record<ModeName, Failover>;
  /** Every etcd-mode cluster's load together (they share the one etcd). */
  etcdIdle: EtcdRates;
  /** Over the first etcd-mode cluster's 50 x 16 runs (the others idle meanwhile). */
  etcdUnderLoad: EtcdRates | null;
}

const ratio = (etcd: number, base: number) => (base === 0 ? 'n/a' : `${((etcd / base) * 100).toFixed(1)} %`);
const methods = (r: EtcdRates) =>
  Object.entries(r.byMethod)
    .sort(([, x], [, y]) => y - x)
    .map(([m, n]) => `${m} ${n}`)
    .join(', ') || 'none';

const failover = (f: Failover | undefined) =>
  f === undefined ? '-' : `${f.median ?? '-'} / ${f.max ?? '-'}, ${f.runs.length}${f.errors.length > 0 ? ` (+${f.errors.length} failed)` : ''}`;

function pairsTable(r: EtcdModeResults, e: ModeName): string[] {
  const lines = [
    `| keyed pairs on the active | default pairs/s | ${e} pairs/s | ${e}/default | default ms/pair | ${e} ms/pair | default µs CPU/pair (active / standbys) | ${e} µs CPU/pair (active / standbys) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const d of r.pairs.default ?? []) {
    const x = r.pairs[e]?.find((row) => row.load === d.load);
    if (x === undefined) continue;
    lines.push(
      `| ${d.load} | ${d.pairsPerSec} | ${x.pairsPerSec} | ${ratio(x.pairsPerSec, d.pairsPerSec)} | ${d.msPerPair} | ${x.msPerPair} | ${d.activeUsPerPair} / ${d.standbysUsPerPair} | ${x.activeUsPerPair} / ${x.standbysUsPerPair} |`,
    );
  }
  return lines;
}

export function formatEtcdModeReport(r: EtcdModeResults): string {
  const etcdModes = r.modes.filter((m) => m !== 'default');
  const lines = [
    `## Default mode vs etcd mode (${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.machine.cores} cores ${r.machine.cpu}, Node ${r.machine.node}, load average ${r.loadAverage.join(' ')}; ${r.seconds} s runs, median of ${r.repeats}, alternating)`,
    '',
    ...etcdModes.flatMap((e, i) => [...(i === 0 ? [] : ['']), ...pairsTable(r, e)]),
    '',
    `| | ${r.modes.join(' | ')} |`,
    `|---|${r.modes.map(() => '---:|').join('')}`,
    `| handover p99, 50 clients on one key (ms) | ${r.modes.map((m) => r.handoverP99Ms[m] ?? '-').join(' | ')} |`,
    `| failover after kill -9 of the active, median / max (ms), rounds | ${r.modes.map((m) => failover(r.failoverMs[m])).join(' | ')} |`,
    `| what bounds it | peer timeout ${r.peerTimeoutMs} ms | ${etcdModes.map(() => `etcd lease TTL ${r.etcdLeaseTtlS} s`).join(' | ')} |`,
    '',
    `etcd requests that the etcd-mode cluster${etcdModes.length > 1 ? `s (${etcdModes.length} clusters of 3 nodes)` : ' (3 nodes)'} add${etcdModes.length > 1 ? '' : 's'}, from etcd's /metrics (gRPC messages received by the 3 members; raft proposals committed):`,
    `- idle${etcdModes.length > 1 ? `, the ${etcdModes.length} clusters together` : ''}: ${r.etcdIdle.requestsPerSec} requests/s (${methods(r.etcdIdle)}); ${r.etcdIdle.proposalsPerSec} proposals/s`,
    ...r.modes.flatMap((m) => (r.failoverMs[m]?.errors ?? []).map((e) => `- ${m} mode, a failover round failed: ${e}`)),
    r.etcdUnderLoad === null
      ? '- under load: not measured'
      : `- under the 50 x 16 load${etcdModes.length > 1 ? ` on ${etcdModes[0]}` : ''}: ${r.etcdUnderLoad.requestsPerSec} requests/s (${methods(r.etcdUnderLoad)}); ${r.etcdUnderLoad.proposalsPerSec} proposals/s`,
  ];
  return lines.join('\n');
}
