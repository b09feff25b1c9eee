// The one load generator for the uncontended figures: `clients` LockClients of one system, each
// on its own keys, each doing acquire+release pairs for `durationMs`, `depth` pairs at a time
// (depth 1: one pair at a time; depth 16: 16 pairs in flight per client, each released as soon
// as it is granted, the next batch when all 16 are done). The server's CPU is read around it.
import { round } from './stats.ts';
import type { LockSystem } from './systems/lock-system.ts';

export interface PairsRun {
  pairsPerSec: number;
  serverCpuUsPerPair: number;
  pairs: number;
}

export async function runPairs(system: LockSystem, clients: number, depth: number, durationMs: number): Promise<PairsRun> {
  const conns = await Promise.all(Array.from({ length: clients }, () => system.connect()));
  try {
    let pairs = 0;
    const cpu0 = system.serverCpuMs();
    const start = performance.now();
    const deadline = start + durationMs;
    await Promise.all(
      conns.map(async (client, c) => {
        const keys = Array.from({ length: depth }, (_, d) => `pairs/${c}/${d}`);
        while (performance.now() < deadline) {
          await Promise.all(
            keys.map(async (key) => {
              const held = await client.acquire(key);
              await held.release();
              pairs++;
            }),
          );
        }
      }),
    );
    const elapsedMs = performance.now() - start;
    const cpuMs = system.serverCpuMs() - cpu0;
    return { pairsPerSec: Math.round((pairs / elapsedMs) * 1000), serverCpuUsPerPair: round((cpuMs * 1000) / pairs), pairs };
  } finally {
    await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  }
}
