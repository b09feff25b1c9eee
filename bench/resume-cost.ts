// `npm run bench:resume`: what replicating resumable sessions costs the active node. 10,000
// sessions, each holding its own lock with an 8 s lease and heartbeating every 2 s (lease/4), on
// the active of a 2-node cluster: the active's CPU with seed-protocol sessions (nothing about
// them is replicated after the grant) against the same with resumable ones (claim key on
// ACQUIRE; their renewals go to the standby coalesced, one line every 250 ms). Runs alternate
// between the two kinds, a fresh set of sessions each; medians of the runs.
// Usage: npm run bench:resume [-- --sessions 10000 --seconds 8 --repeats 3]
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startCluster, waitSettled } from '../server/testing/cluster-harness.ts';
import { processCpuMs } from './baton-process.ts';
import { intFlag } from './flags.ts';
import { hostMachine } from './report.ts';
import { median, round } from './stats.ts';

const sessions = intFlag('--sessions', 10_000, 15_000);
const seconds = intFlag('--seconds', 8, 60);
const repeats = intFlag('--repeats', 3, 10);
const LEASE_MS = 8_000;

type Kind = 'seed' | 'resumable';
interface Run {
  kind: Kind;
  activeCpuPercent: number;
  standbyCpuPercent: number;
  heartbeatsPerSec: number;
}

const cluster = await startCluster({ nodes: 2, extraArgs: ['--max-connections', String(sessions + 1_000)], startTimeoutMs: 30_000 });
const runs: Run[] = [];
try {
  await waitSettled(cluster, 'a', 15_000);
  const pid = (id: string) => cluster.node(id).pid as number;
  for (let r = 0; r < repeats; r++) {
    for (const kind of (r % 2 === 0 ? ['seed', 'resumable'] : ['resumable', 'seed']) as Kind[]) {
      process.stderr.write(`bench: resume: run ${r + 1}/${repeats}, ${sessions} ${kind} sessions\n`);
      const script = new URL('./session-holders.ts', import.meta.url).pathname;
      const args = ['--import', 'tsx', script, String(cluster.node('a').ports.session), String(sessions), String(LEASE_MS), ...(kind === 'resumable' ? ['resumable'] : [])];
      const holders = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: holders.stdout })[Symbol.asyncIterator]();
      const ready = JSON.parse(String((await lines.next()).value)) as { ready: number; refused: number };
      if (ready.ready < sessions) throw new Error(`only ${ready.ready} of ${sessions} sessions were granted`);
      const answered = async () => {
        holders.stdin.write('count\n');
        return (JSON.parse(String((await lines.next()).value)) as { heartbeatReplies: number }).heartbeatReplies;
      };
      await new Promise((res) => setTimeout(res, 3_000)); // heartbeats in their steady rhythm
      const hb0 = await answered();
      const [a0, b0] = [processCpuMs(pid('a')), processCpuMs(pid('b'))];
      const t0 = performance.now();
      await new Promise((res) => setTimeout(res, seconds * 1_000));
      const elapsed = performance.now() - t0;
      const [a1, b1] = [processCpuMs(pid('a')), processCpuMs(pid('b'))];
      const hb1 = await answered();
      runs.push({ kind, activeCpuPercent: ((a1 - a0) / elapsed) * 100, standbyCpuPercent: ((b1 - b0) / elapsed) * 100, heartbeatsPerSec: (hb1 - hb0) / (elapsed / 1000) });
      holders.stdin.write('stop\n');
      await new Promise((res) => holders.once('exit', res));
      await new Promise((res) => setTimeout(res, 1_500)); // the releases settle on both nodes
    }
  }
} finally {
  await cluster.close();
}

const summary = (kind: Kind) => {
  const of = runs.filter((r) => r.kind === kind);
  return {
    activeCpuPercent: round(median(of.map((r) => r.activeCpuPercent)), 1),
    standbyCpuPercent: round(median(of.map((r) => r.standbyCpuPercent)), 1),
    heartbeatsPerSec: Math.round(median(of.map((r) => r.heartbeatsPerSec))),
    runs: of.map((r) => round(r.activeCpuPercent, 1)),
  };
};
const seed = summary('seed');
const resumable = summary('resumable');
const extraPercent = round(((resumable.activeCpuPercent - seed.activeCpuPercent) / seed.activeCpuPercent) * 100, 1);
const machine = hostMachine();
console.log(`Resumable sessions: replication cost on the active (${machine.cores} cores, ${machine.cpu}, Node ${machine.node}; ${sessions} sessions, ${LEASE_MS} ms lease, heartbeat every ${LEASE_MS / 4} ms; ${repeats} runs of ${seconds} s each)\n`);
console.log('| sessions | heartbeats/s answered | active CPU (median; runs) | standby CPU |\n|---|---|---|---|');
for (const [name, s] of [['seed protocol', seed], ['resumable (claim key)', resumable]] as const) {
  console.log(`| ${name} | ${s.heartbeatsPerSec} | ${s.activeCpuPercent} % (${s.runs.join(', ')}) | ${s.standbyCpuPercent} % |`);
}
console.log(`\nextra active CPU for resumable sessions: ${extraPercent} % (budget: 10 %)`);
const dir = new URL('./results/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
writeFileSync(`${dir}resume-latest.json`, `${JSON.stringify({ machine, sessions, leaseMs: LEASE_MS, seconds, repeats, seed, resumable, extraPercent, runs }, null, 2)}\n`);
