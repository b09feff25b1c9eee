// Issue 14's budget at 16 in flight: "Baton keyed, pipelined 16, at most 1.05x the floor". This
// script measures the floor's server CPU per pair over real sockets (as section 1 does), takes 5 %
// of it as the budget Baton may spend above the floor, and times, without sockets and in one
// process, the per-pair work that lies on top of what the floor does:
//   - floor: the floor's own line loop and answer function (floor-answers.ts) on the same request chunks,
//     decoded as the floor's socket decodes them (latin1);
//   - Baton, bare: the line splitter, the keyed codec and the lock engine with no listener (a
//     claim, a lease deadline, a FIFO queue to check, a fencing token), answering the same chunks;
//   - Baton, as the daemon runs it: the same with the daemon's listeners (metrics, the charts'
//     history and grant log, the events feed), which is what the issue asks to keep.
// Chunks carry 16 requests, as KeyedClient's writes do at 16 in flight. Tight loops on warm
// caches are the cheapest these paths can ever be, so each figure is a lower bound of what the
// daemon pays for the same work.
//   node --import tsx bench/floor-budget.ts [--seconds 3] [--repeats 3]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LockEngine } from '../lib/engine/lock-engine.ts';
import type { Claim, ClaimOwner } from '../lib/engine/claim.ts';
import { encodeGranted, encodeReleased, parseKeyedRequest } from '../lib/protocol/keyed-codec.ts';
import { LineSplitter } from '../lib/protocol/line-splitter.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { FeedRing } from '../server/live-feed/feed-ring.ts';
import { HistoryRecorder } from '../server/chart-history/history-recorder.ts';
import { createMetrics } from '../server/http/metrics.ts';
import { intFlag } from './flags.ts';
import { runPairs } from './pairs-load.ts';
import { hostMachine } from './report.ts';
import { answerLines, floorKeyedAnswer, floorTokens } from './servers/floor-answers.ts';
import { startFloor } from './servers/floor-server.ts';
import { median, round } from './stats.ts';
import { floorKeyed } from './systems/floor-systems.ts';

const DEPTH = 16;
const KEYS = 800; // 50 clients x 16 keys, as section 1
const PAIRS = 160_000;
const SAMPLES = 7;

/** One run's request chunks: 16 `A`s, then their 16 `R`s with the tokens the server will give. */
function chunks(firstToken: number): Buffer[] {
  const out: Buffer[] = [];
  let token = firstToken;
  for (let p = 0; p < PAIRS; p += DEPTH) {
    let a = '';
    let r = '';
    for (let d = 0; d < DEPTH; d++) {
      const key = `pairs/${(p + d) % KEYS}`;
      a += `A ${key} 30 0\n`;
      r += `R ${key} ${token++}\n`;
    }
    out.push(Buffer.from(a, 'latin1'), Buffer.from(r, 'latin1'));
  }
  return out;
}

/**
 * Times `serve` over fresh chunks, SAMPLES runs after one to warm up. The release chunks' replies
 * are summed up, so none is optimised away; the callers count the OK releases as the real check.
 */
function timePerPair(firstToken: () => number, serve: (chunk: Buffer) => string): number {
  const samples: number[] = [];
  for (let s = 0; s <= SAMPLES; s++) {
    const input = chunks(firstToken());
    let ok = 0;
    const t0 = performance.now();
    for (const chunk of input) {
      const out = serve(chunk);
      if (out.charCodeAt(0) === 82 /* R */) ok += out.length; // keeps the replies alive
    }
    const ms = performance.now() - t0;
    if (ok === 0) throw new Error('floor-budget: no release was answered');
    if (s > 0) samples.push((ms * 1000) / PAIRS); // the first run warms up
  }
  return round(median(samples), 3);
}

/** The floor's work per chunk: decode, split, answer, one reply string (floor-line-server.ts). */
function floorWork(): number {
  const floorAnswer = floorKeyedAnswer();
  let released = 0;
  const answer = (line: string) => {
    const reply = floorAnswer(line);
    if (reply.endsWith(' OK\n')) released++;
    return reply;
  };
  const us = timePerPair(
    () => floorTokens.last + 1,
    (chunk) => answerLines(chunk.toString('latin1'), answer),
  );
  if (released !== PAIRS * (SAMPLES + 1)) throw new Error(`floor-budget: the floor released ${released} of ${PAIRS * (SAMPLES + 1)}`);
  return us;
}

type Listener = 'metrics' | 'history' | 'feed';

/** Baton's work per chunk without sockets: splitter, codec, engine, replies, and the daemon's `listeners`. */
function batonWork(listeners: Listener[]): number {
  const engine = new LockEngine({ now: () => performance.now() }, new BlockTokenSource(new MemoryCeilingStore()));
  const clock = { now: () => performance.now(), wall: (t: number) => Date.now() - (performance.now() - t) };
  if (listeners.includes('metrics')) {
    createMetrics(engine, () => ({ keyed: 0, session: 0 }), { role: () => 'active', nodeId: 'bench', instanceId: 'bench' });
  }
  if (listeners.includes('history')) new HistoryRecorder(engine, clock);
  if (listeners.includes('feed')) {
    const feed = new FeedRing(clock);
    engine.subscribe((e) => feed.push(e));
  }
  let out = '';
  let released = 0;
  const owner: ClaimOwner = {
    onGranted: (claim: Claim) => {
      out += encodeGranted(claim.lock.name, claim.token);
      return true;
    },
    onEnded: () => {},
  };
  const ask = { name: '', owner, protocol: 'keyed' as const, client: '127.0.0.1:1', clientName: null, leaseMs: 0, waitMs: 0, sliding: false };
  const splitter = new LineSplitter({
    onLine(buf, start, end, text) {
      const req = parseKeyedRequest(buf, start, end, text);
      if (req.kind === 'acquire') {
        ask.name = req.key;
        ask.leaseMs = req.leaseMs;
        ask.waitMs = req.waitMs;
        engine.acquire(ask);
      } else if (req.kind === 'release') {
        const outcome = engine.release(req.key, req.token);
        if (outcome === 'ok') released++;
        out += encodeReleased(req.key, outcome === 'ok');
      } else throw new Error(`floor-budget: unexpected request ${req.kind}`);
    },
    onOverflow() {
      throw new Error('floor-budget: line too long');
    },
  });
  const us = timePerPair(
    () => Number(engine.tokenHighWater) + 1,
    (chunk) => {
      out = '';
      splitter.push(chunk);
      return out;
    },
  );
  if (released !== PAIRS * (SAMPLES + 1)) throw new Error(`floor-budget: Baton released ${released} of ${PAIRS * (SAMPLES + 1)}`);
  return us;
}

/** The kinds of work timed, each in a fresh process so no JIT state carries over between them. */
const WORKS: Record<string, { label: string; run: () => number }> = {
  floor: { label: "the floor's line loop and answer function", run: floorWork },
  bare: { label: 'Baton: splitter, codec, engine, no listener', run: () => batonWork([]) },
  metrics: { label: 'Baton: the same with the metrics listener alone', run: () => batonWork(['metrics']) },
  history: { label: "Baton: the same with the charts' history and grant log alone", run: () => batonWork(['history']) },
  feed: { label: 'Baton: the same with the events feed alone', run: () => batonWork(['feed']) },
  daemon: { label: "Baton: the same with all of the daemon's listeners", run: () => batonWork(['metrics', 'history', 'feed']) },
};

const child = process.argv.indexOf('--work');
if (child > 0) {
  const work = WORKS[process.argv[child + 1] ?? ''];
  if (work === undefined) throw new Error(`floor-budget: no work ${process.argv[child + 1]}`);
  process.stdout.write(`${work.run()}\n`);
  process.exit(0);
}

const seconds = intFlag('--seconds', 3, 60);
const repeats = intFlag('--repeats', 3, 20);

const floor = await startFloor();
let floorSocketUs: number;
try {
  const system = floorKeyed(floor.keyedPort, floor.cpuMs);
  await runPairs(system, 50, DEPTH, 1_000);
  const runs: number[] = [];
  for (let r = 0; r < repeats; r++) runs.push((await runPairs(system, 50, DEPTH, seconds * 1_000)).serverCpuUsPerPair);
  floorSocketUs = median(runs);
} finally {
  await floor.stop();
}

// Every kind once per repeat, in turn, each in a child process of its own.
const times = new Map<string, number[]>();
for (let r = 0; r < repeats; r++) {
  for (const name of Object.keys(WORKS)) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--work', name], { encoding: 'utf8' });
    times.set(name, [...(times.get(name) ?? []), Number(out.trim())]);
  }
}
const us = (name: string) => median(times.get(name) ?? []);
const floorUs = us('floor');
const budget = round(floorSocketUs * 0.05, 3);
const m = hostMachine();
console.log(`Machine: ${m.cores} cores, ${m.cpu}, Node ${m.node}, ${new Date().toISOString()}.`);
console.log(`The floor over sockets, 50 clients, 16 in flight: ${floorSocketUs} us of server CPU per pair (median of ${repeats} runs of ${seconds} s).`);
console.log(`Issue 14's 1.05x leaves Baton ${budget} us per pair above it.\n`);
console.log(
  `| work per pair, no sockets (each the median of ${repeats} processes, each the median of ${SAMPLES} runs of ${PAIRS} pairs) | time | above the floor's | above / the budget |`,
);
console.log('|---|---|---|---|');
for (const [name, work] of Object.entries(WORKS)) {
  if (name === 'floor') console.log(`| ${work.label} | ${floorUs} us | - | - |`);
  else console.log(`| ${work.label} | ${us(name)} us | ${round(us(name) - floorUs, 3)} us | ${round((us(name) - floorUs) / budget, 1)}x |`);
}
