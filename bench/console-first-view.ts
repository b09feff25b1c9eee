// What a console page view costs the lock path right after start-up: a fresh `baton serve`
// (console on), one keyed connection doing acquire/release pairs back to back, and the paths a
// dashboard loads, each fetched twice (first view, then warm). Prints, per path, the worst pair
// latency around each fetch, as medians over the repeats (a fresh server each time).
//   node --import tsx bench/console-first-view.ts [--repeats 5] [--bin path/to/bin/baton]
// --bin runs another checkout's baton (e.g. a worktree of an older commit) for a before/after.
import { connect } from 'node:net';
import { startBaton } from './baton-process.ts';
import { hostMachine } from './report.ts';

const PATHS = ['/', '/api/v1/stats', '/api/v1/locks?limit=50', '/api/v1/cluster', '/api/v1/audit?limit=20'];

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function once(bin: string | undefined): Promise<Map<string, { first: number; warm: number }>> {
  const baton = await startBaton([], { console: true, ...(bin === undefined ? {} : { bin }) });
  const socket = connect(baton.lockPort, '127.0.0.1');
  socket.setNoDelay(true);
  let buffered = '';
  let answer: ((line: string) => void) | null = null;
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    buffered += chunk;
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const a = answer;
      answer = null;
      a?.(line);
    }
  });
  const ask = (line: string) =>
    new Promise<string>((resolve) => {
      answer = resolve;
      socket.write(`${line}\n`);
    });
  let worst = 0;
  let running = true;
  const pairs = (async () => {
    while (running) {
      const t = performance.now();
      const granted = await ask('A first-view 10 0');
      await ask(`R first-view ${granted.split(' ')[2]}`);
      worst = Math.max(worst, performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  await settle();
  const out = new Map<string, { first: number; warm: number }>();
  const base = `http://127.0.0.1:${baton.httpPort}`;
  for (const round of ['first', 'warm'] as const) {
    for (const path of PATHS) {
      worst = 0;
      await (await fetch(base + path)).arrayBuffer();
      await settle();
      const entry = out.get(path) ?? { first: 0, warm: 0 };
      entry[round] = worst;
      out.set(path, entry);
    }
  }
  running = false;
  await pairs;
  socket.destroy();
  await baton.stop();
  return out;
}

const repeats = Number(flag('--repeats') ?? 5);
const bin = flag('--bin');
const runs: Array<Map<string, { first: number; warm: number }>> = [];
for (let r = 0; r < repeats; r++) runs.push(await once(bin));
const machine = hostMachine();
console.log(
  `${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(`baton: ${bin ?? 'this checkout'}; ${repeats} fresh servers; worst keyed pair (ms) around each fetch, median of repeats`);
console.log('| path | first view | warm |');
console.log('|---|---|---|');
for (const path of PATHS) {
  const first = median(runs.map((m) => m.get(path)?.first ?? Number.NaN));
  const warm = median(runs.map((m) => m.get(path)?.warm ?? Number.NaN));
  console.log(`| ${path} | ${first.toFixed(1)} | ${warm.toFixed(1)} |`);
}
