// The tables of bench/etcd-turns.ts: per load (closed loop, or paced at a period), one row per
// mode and round with what each node did per pair, then the medians per mode, then etcd against
// the default mode round by round.
import { median } from './stats.ts';

export type TurnsMode = 'default' | 'etcd';

/** One process's counters over a run, divided by the pairs done. */
export interface PerPair {
  us: number;
  reads: number;
  writes: number;
  voluntary: number;
  involuntary: number;
}

export interface TurnsRun {
  /** 1-based; 0 for a median row. */
  round: number;
  mode: TurnsMode;
  /** 0: closed loop. */
  periodMs: number;
  pairsPerSec: number;
  /** The active first, then the two standbys (by node id). */
  nodes: PerPair[];
  /** The load generator's own CPU (this script's process), µs per pair. */
  generatorUs: number;
  /** The three etcd members' CPU together, µs per pair. */
  etcdUs: number;
  /** Share of the machine's CPU time that was idle during the run, %. */
  idlePct: number;
  /** 1-minute load average at the run's end. */
  loadAverage1: number;
}

export interface TurnsResults {
  machine: { cores: number; cpu: string; node: string };
  /** 1, 5 and 15 minutes, at the end. */
  loadAverage: number[];
  date: string;
  seconds: number;
  repeats: number;
  clients: number;
  depth: number;
  periodsMs: number[];
  etcdInSync: number;
  etcdLeaseTtlS: number;
  runs: TurnsRun[];
  /** Per period and mode, each figure the median of its rounds. */
  medians: TurnsRun[];
}

const NODE_COUNT = 3;

export function medianRun(runs: TurnsRun[], mode: TurnsMode, periodMs: number): TurnsRun {
  const mine = runs.filter((r) => r.mode === mode && r.periodMs === periodMs);
  const m = (pick: (r: TurnsRun) => number) => median(mine.map(pick));
  const node = (i: number): PerPair => ({
    us: m((r) => r.nodes[i]?.us ?? Number.NaN),
    reads: m((r) => r.nodes[i]?.reads ?? Number.NaN),
    writes: m((r) => r.nodes[i]?.writes ?? Number.NaN),
    voluntary: m((r) => r.nodes[i]?.voluntary ?? Number.NaN),
    involuntary: m((r) => r.nodes[i]?.involuntary ?? Number.NaN),
  });
  return {
    round: 0,
    mode,
    periodMs,
    pairsPerSec: m((r) => r.pairsPerSec),
    nodes: Array.from({ length: NODE_COUNT }, (_, i) => node(i)),
    generatorUs: m((r) => r.generatorUs),
    etcdUs: m((r) => r.etcdUs),
    idlePct: m((r) => r.idlePct),
    loadAverage1: m((r) => r.loadAverage1),
  };
}

const triple = (r: TurnsRun, pick: (n: PerPair) => number, digits: number) => r.nodes.map((n) => pick(n).toFixed(digits)).join(' / ');
const percent = (x: number, base: number) => (base === 0 ? 'n/a' : `${((x / base) * 100).toFixed(1)} %`);

function row(r: TurnsRun, base: TurnsRun | undefined): string {
  const cells = [
    r.round === 0 ? 'median' : String(r.round),
    r.mode,
    String(Math.round(r.pairsPerSec)),
    r.mode === 'default' || base === undefined ? '' : percent(r.pairsPerSec, base.pairsPerSec),
    triple(r, (n) => n.us, 2),
    triple(r, (n) => n.reads, 3),
    triple(r, (n) => n.writes, 3),
    triple(r, (n) => n.voluntary, 4),
    triple(r, (n) => n.involuntary, 4),
    r.generatorUs.toFixed(2),
    r.etcdUs.toFixed(2),
    r.idlePct.toFixed(1),
    r.loadAverage1.toFixed(1),
  ];
  return `| ${cells.join(' | ')} |`;
}

function loadTitle(r: TurnsResults, periodMs: number): string {
  if (periodMs === 0) return `### Closed loop, ${r.clients} clients x ${r.depth} in flight`;
  const offered = Math.round((r.clients * r.depth * 1_000) / periodMs);
  return `### Paced, ${r.clients} clients x ${r.depth} pairs at most every ${periodMs} ms (${offered.toLocaleString('en-US')} pairs/s offered)`;
}

function loadSection(r: TurnsResults, periodMs: number): string[] {
  const runs = r.runs.filter((x) => x.periodMs === periodMs);
  const baseOf = (x: TurnsRun) => runs.find((d) => d.mode === 'default' && d.round === x.round);
  const medians = r.medians.filter((x) => x.periodMs === periodMs);
  const medianBase = medians.find((x) => x.mode === 'default');
  const rounds = [...new Set(runs.map((x) => x.round))].sort((a, b) => a - b);
  const byRound = (pick: (x: TurnsRun) => number) =>
    rounds
      .map((n) => {
        const d = runs.find((x) => x.round === n && x.mode === 'default');
        const e = runs.find((x) => x.round === n && x.mode === 'etcd');
        return d === undefined || e === undefined ? 'n/a' : percent(pick(e), pick(d));
      })
      .join(', ');
  return [
    loadTitle(r, periodMs),
    '',
    '| round | mode | pairs/s | etcd/default | µs CPU/pair A / S1 / S2 | reads/pair A / S1 / S2 | writes/pair A / S1 / S2 | voluntary cs/pair A / S1 / S2 | involuntary cs/pair A / S1 / S2 | generator µs/pair | etcd µs/pair | machine idle % | load |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[...runs].sort((a, b) => a.round - b.round || a.mode.localeCompare(b.mode)).map((x) => row(x, baseOf(x))),
    // One round is its own median: the rows are not repeated.
    ...(rounds.length > 1 ? [...medians].sort((a, b) => a.mode.localeCompare(b.mode)).map((x) => row(x, medianBase)) : []),
    '',
    `etcd / default by round: pairs/s ${byRound((x) => x.pairsPerSec)}; the active's µs CPU/pair ${byRound((x) => x.nodes[0]?.us ?? Number.NaN)}.`,
  ];
}

export function formatTurnsReport(r: TurnsResults): string {
  return [
    `## Default mode vs etcd mode (\`--etcd-in-sync ${r.etcdInSync}\`), per pair and per node (${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.machine.cores} cores ${r.machine.cpu}, Node ${r.machine.node}, load average ${r.loadAverage.join(' ')}; ${r.seconds} s runs, ${r.repeats === 1 ? 'one round' : `${r.repeats} rounds alternating, medians`})`,
    '',
    "A is the active, S1 and S2 the standbys; each counter is its difference over the run divided by the pairs done. Syscalls: /proc/PID/io syscr and syscw (all threads); context switches: /proc/PID/status (the main thread, the event loop); generator: this script's own CPU; etcd: the three members together; machine idle: /proc/stat, all cores.",
    ...r.periodsMs.flatMap((p) => ['', ...loadSection(r, p)]),
  ].join('\n');
}
