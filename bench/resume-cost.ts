// `npm run bench:resume`: what replicating resumable sessions costs the active node. 10,000
// sessions, each holding its own lock with an 8 s lease and heartbeating every 2 s (lease/4), on
// the active of a 2-node cluster: the active's CPU with seed-protocol sessions (nothing about
// them is replicated after the grant) against the same with resumable ones (claim key on
// ACQUIRE; their renewals go to the standby coalesced, one line every 250 ms). Runs alternate
// between the two kinds, a fresh set of sessions each; medians of the runs.
// On a shared 2-core machine the two figures are a few % apart either way from run to run, so
// the script also times the replication work itself in-process (what a heartbeat of a resumable
// session adds: the engine noting it, and its share of the 250 ms renew line), per heartbeat,
// against the active's whole CPU per heartbeat measured above.
// Usage: npm run bench:resume [-- --sessions 10000 --seconds 8 --repeats 3]
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startCluster, waitSettled } from '../server/testing/cluster-harness.ts';
import { ReplicationSource } from '../server/cluster/replication-source.ts';
import { LockEngine } from '../lib/engine/lock-engine.ts';
import type { Claim } from '../lib/engine/claim.ts';
import { FakeClock } from '../lib/engine/clock.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { processCpuMs } from './baton-process.ts';
import { exitWithUsageOnHelp, intFlag } from './flags.ts';
import { hostMachine } from './report.ts';
import { median, round } from './stats.ts';

exitWithUsageOnHelp(import.meta.url);

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
      const args = [
        '--import',
        'tsx',
        script,
        String(cluster.node('a').ports.session),
        String(sessions),
        String(LEASE_MS),
        ...(kind === 'resumable' ? ['resumable'] : []),
      ];
      const holders = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
      const lines = createInterface({ input: holders.stdout })[Symbol.asyncIterator]();
      const ready = JSON.parse(String((await lines.next()).value)) as { ready: number; refused: number };
      // A session whose first line came late (a loaded machine) is refused; a few do not change the figure.
      if (ready.ready < sessions * 0.95) throw new Error(`only ${ready.ready} of ${sessions} sessions were granted`);
      if (ready.ready < sessions) process.stderr.write(`bench: resume: ${ready.ready} of ${sessions} sessions granted\n`);
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
      runs.push({
        kind,
        activeCpuPercent: ((a1 - a0) / elapsed) * 100,
        standbyCpuPercent: ((b1 - b0) / elapsed) * 100,
        heartbeatsPerSec: (hb1 - hb0) / (elapsed / 1000),
      });
      holders.stdin.write('stop\n');
      await new Promise((res) => holders.once('exit', res));
      await new Promise((res) => setTimeout(res, 1_500)); // the releases settle on both nodes
    }
  }
} finally {
  await cluster.close();
}

/**
 * ns per heartbeat that replication adds for a resumable session: `sessions` claims touched round
 * robin (heartbeats), a renew line built and handed to a (discarding) standby link every
 * sessions/8 heartbeats (250 ms at 2 s heartbeats), with and without claim keys.
 */
function inProcessNsPerHeartbeat(keyed: boolean): number {
  const clock = new FakeClock(0);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 1_000_000n));
  const owner = { onGranted: () => true, onEnded: () => {} };
  const claims: Claim[] = [];
  for (let i = 0; i < sessions; i++)
    claims.push(
      engine.acquire({
        name: `holders/${i}`,
        owner,
        protocol: 'session',
        client: 'c',
        leaseMs: LEASE_MS,
        waitMs: 0,
        sliding: true,
        keyHash: keyed ? i.toString(16).padStart(64, '0') : null,
      }),
    );
  const source = new ReplicationSource({
    engine,
    clock,
    instanceId: 'i',
    ackTimeoutMs: 1_000,
    ceiling: () => 0n,
    failovers: () => [],
    onStreamDropped: () => {},
  });
  source.start();
  let bytes = 0;
  source.addStandby('b', {
    send: () => {},
    sendRaw: (l) => (bytes += l.length),
    close: () => {},
    bufferedBytes: () => 0,
    whenDrained: () => {},
    flushNow: () => {},
  });
  const beats = sessions * 40;
  const perFlush = Math.max(1, Math.floor(sessions / 8));
  const t0 = process.hrtime.bigint();
  for (let n = 0; n < beats; n++) {
    clock.advance(0.4);
    const claim = claims[n % sessions];
    if (claim !== undefined) engine.touch(claim);
    if (n % perFlush === perFlush - 1) source.flushRenewals();
  }
  const ns = Number(process.hrtime.bigint() - t0) / beats;
  source.stop();
  if (bytes === 0 && keyed) throw new Error('no renew line was sent');
  return ns;
}
inProcessNsPerHeartbeat(true); // warm-up
const plainNs = median([1, 2, 3].map(() => inProcessNsPerHeartbeat(false)));
const keyedNs = median([1, 2, 3].map(() => inProcessNsPerHeartbeat(true)));

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
console.log(
  `Resumable sessions: replication cost on the active (${machine.cores} cores, ${machine.cpu}, Node ${machine.node}; ${sessions} sessions, ${LEASE_MS} ms lease, heartbeat every ${LEASE_MS / 4} ms; ${repeats} runs of ${seconds} s each)\n`,
);
console.log('| sessions | heartbeats/s answered | active CPU (median; runs) | standby CPU |\n|---|---|---|---|');
for (const [name, s] of [
  ['seed protocol', seed],
  ['resumable (claim key)', resumable],
] as const) {
  console.log(`| ${name} | ${s.heartbeatsPerSec} | ${s.activeCpuPercent} % (${s.runs.join(', ')}) | ${s.standbyCpuPercent} % |`);
}
console.log(`\nextra active CPU for resumable sessions, end to end: ${extraPercent} % (budget: 10 %; within the run-to-run noise of this machine)`);
const serverNsPerBeat = ((seed.activeCpuPercent / 100) * 1e9) / seed.heartbeatsPerSec;
const addedNs = keyedNs - plainNs;
const inProcessPercent = round((addedNs / serverNsPerBeat) * 100, 2);
console.log(
  `in-process: a heartbeat's touch plus its share of the renew line: ${round(keyedNs, 0)} ns resumable vs ${round(plainNs, 0)} ns seed, +${round(addedNs, 0)} ns, against ${round(serverNsPerBeat / 1000, 1)} us of active CPU per heartbeat: +${inProcessPercent} %`,
);
const dir = new URL('./results/', import.meta.url).pathname;
mkdirSync(dir, { recursive: true });
writeFileSync(
  `${dir}resume-latest.json`,
  `${JSON.stringify({ machine, sessions, leaseMs: LEASE_MS, seconds, repeats, seed, resumable, extraPercent, inProcess: { plainNs, keyedNs, inProcessPercent }, runs }, null, 2)}\n`,
);
