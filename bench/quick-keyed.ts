// Quick figure for development: server CPU per acquire+release pair over the raw keyed protocol.
// Usage: node --import tsx bench/quick-keyed.ts [clients] [depth] [seconds]
import { startBaton } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';

const clients = Number(process.argv[2] ?? 50);
const depth = Number(process.argv[3] ?? 16);
const seconds = Number(process.argv[4] ?? 5);
const baton = await startBaton();
try {
  await rawKeyedLoad(baton.lockPort, clients, depth, 1_000); // warm-up
  const cpu0 = baton.cpuMs();
  const r = await rawKeyedLoad(baton.lockPort, clients, depth, seconds * 1_000);
  const cpu = baton.cpuMs() - cpu0;
  console.log(JSON.stringify({
    clients, depth, pairs: r.pairs, pairsPerSec: Math.round((r.pairs / r.elapsedMs) * 1000),
    serverCpuUsPerPair: +((cpu * 1000) / r.pairs).toFixed(2),
  }));
} finally {
  await baton.stop();
}
