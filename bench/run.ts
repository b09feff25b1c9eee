// `npm run bench`: the core figures on this machine, in one run against one `baton serve`
// child process on loopback. Each figure is the median of `--repeats` runs (default 3).
// Prints a markdown table and writes JSON to bench/results/.
// Usage: npm run bench [-- --seconds 5 --repeats 3]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startBaton } from './baton-process.ts';
import { keyedHandover, keyedPairs, sessionHandover } from './client-figures.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { median, round } from './stats.ts';
import { intFlag } from './flags.ts';

const seconds = intFlag('--seconds', 5, 120);
const repeats = intFlag('--repeats', 3, 20);

/** Runs `measure` `repeats` times and keeps, for every numeric field, the median. */
async function medianOf<T extends Record<string, number>>(measure: () => Promise<T>): Promise<T & { runs: number }> {
  const runs: T[] = [];
  for (let i = 0; i < repeats; i++) runs.push(await measure());
  const out: Record<string, number> = { runs: repeats };
  for (const key of Object.keys(runs[0] as T)) out[key] = median(runs.map((r) => r[key] as number));
  return out as T & { runs: number };
}

async function rawPairs(port: number, cpuMs: () => number, depth: number) {
  const cpu0 = cpuMs();
  const r = await rawKeyedLoad(port, 50, depth, seconds * 1_000);
  const cpu = cpuMs() - cpu0;
  return { pairsPerSec: Math.round((r.pairs / r.elapsedMs) * 1000), serverCpuUsPerPair: round((cpu * 1000) / r.pairs) };
}

const baton = await startBaton();
try {
  await rawKeyedLoad(baton.lockPort, 50, 16, 2_000); // warm-up: JIT and buffers on both sides
  const results = {
    machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
    seconds,
    repeats,
    rawKeyedOneAtATime: await medianOf(() => rawPairs(baton.lockPort, baton.cpuMs, 1)),
    rawKeyedPipelined16: await medianOf(() => rawPairs(baton.lockPort, baton.cpuMs, 16)),
    keyedClientPairs: await medianOf(() => keyedPairs(baton.lockPort, baton.cpuMs, seconds * 1_000)),
    keyedHandover: await medianOf(() => keyedHandover(baton.lockPort, 2_000)),
    sessionHandover: await medianOf(() => sessionHandover(baton.sessionPort, 1_000)),
  };
  const rows = [
    ['raw keyed, 50 clients, 1 pair at a time', `${results.rawKeyedOneAtATime.pairsPerSec} pairs/s`, `${results.rawKeyedOneAtATime.serverCpuUsPerPair} us server CPU/pair`],
    ['raw keyed, 50 clients, pipelined 16', `${results.rawKeyedPipelined16.pairsPerSec} pairs/s`, `${results.rawKeyedPipelined16.serverCpuUsPerPair} us server CPU/pair`],
    ['KeyedClient, 50 concurrent loops', `${results.keyedClientPairs.pairsPerSec} pairs/s`, `${results.keyedClientPairs.serverCpuUsPerPair} us server CPU/pair`],
    ['keyed handover, 2 clients', `p50 ${results.keyedHandover.p50Ms} ms`, `p99 ${results.keyedHandover.p99Ms} ms, max ${results.keyedHandover.maxMs} ms`],
    ['session handover, 2 clients', `p50 ${results.sessionHandover.p50Ms} ms`, `p99 ${results.sessionHandover.p99Ms} ms, max ${results.sessionHandover.maxMs} ms`],
  ];
  console.log(`Baton core figures (${results.machine.cores} cores, ${results.machine.cpu}, Node ${results.machine.node}; medians of ${repeats} runs, ${seconds} s per load run)\n`);
  console.log('| measurement | figure | detail |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}core-latest.json`, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await baton.stop();
}
