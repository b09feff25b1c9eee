// `npm run bench`: the core figures on this machine, in one run against one `baton serve`
// child process on loopback. Prints a markdown table and writes JSON to bench/results/.
// Usage: npm run bench [-- --seconds 5]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startBaton } from './baton-process.ts';
import { keyedHandover, keyedPairs, sessionHandover } from './client-figures.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { round } from './stats.ts';

const secondsFlag = process.argv.indexOf('--seconds');
const seconds = secondsFlag > 0 ? Number(process.argv[secondsFlag + 1]) : 5;
if (!(seconds > 0 && seconds <= 120)) {
  console.error('bench: --seconds takes a number from 1 to 120');
  process.exit(2);
}

async function rawPairs(port: number, cpuMs: () => number, depth: number) {
  await rawKeyedLoad(port, 50, depth, 1_000); // warm-up
  const cpu0 = cpuMs();
  const r = await rawKeyedLoad(port, 50, depth, seconds * 1_000);
  const cpu = cpuMs() - cpu0;
  return { pairsPerSec: Math.round((r.pairs / r.elapsedMs) * 1000), serverCpuUsPerPair: round((cpu * 1000) / r.pairs) };
}

const baton = await startBaton();
try {
  const results = {
    machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
    seconds,
    rawKeyedOneAtATime: await rawPairs(baton.lockPort, baton.cpuMs, 1),
    rawKeyedPipelined16: await rawPairs(baton.lockPort, baton.cpuMs, 16),
    keyedClientPairs: await keyedPairs(baton.lockPort, baton.cpuMs, seconds * 1_000),
    keyedHandover: await keyedHandover(baton.lockPort, 2_000),
    sessionHandover: await sessionHandover(baton.sessionPort, 1_000),
  };
  const rows = [
    ['raw keyed, 50 clients, 1 pair at a time', `${results.rawKeyedOneAtATime.pairsPerSec} pairs/s`, `${results.rawKeyedOneAtATime.serverCpuUsPerPair} us server CPU/pair`],
    ['raw keyed, 50 clients, pipelined 16', `${results.rawKeyedPipelined16.pairsPerSec} pairs/s`, `${results.rawKeyedPipelined16.serverCpuUsPerPair} us server CPU/pair`],
    ['KeyedClient, 50 concurrent loops', `${results.keyedClientPairs.pairsPerSec} pairs/s`, `${results.keyedClientPairs.serverCpuUsPerPair} us server CPU/pair`],
    ['keyed handover, 2 clients', `p50 ${results.keyedHandover.p50Ms} ms`, `p99 ${results.keyedHandover.p99Ms} ms, max ${results.keyedHandover.maxMs} ms`],
    ['session handover, 2 clients', `p50 ${results.sessionHandover.p50Ms} ms`, `p99 ${results.sessionHandover.p99Ms} ms, max ${results.sessionHandover.maxMs} ms`],
  ];
  console.log(`Baton core figures (${results.machine.cores} cores, ${results.machine.cpu}, Node ${results.machine.node}, ${seconds} s per load)\n`);
  console.log('| measurement | figure | detail |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}core-latest.json`, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await baton.stop();
}
