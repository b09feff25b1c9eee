// Section 1: uncontended acquire+release pairs per second and server CPU per pair, 50 clients on
// distinct keys, one pair at a time and 16 in flight per client, for Baton (keyed and session),
// Redis and etcd, alternating within each repeat; ratios against Redis repeat by repeat.
import { runPairs, type PairsRun } from '../pairs-load.ts';
import { alternate, medians, pairedRatio } from '../side-by-side.ts';
import type { LockSystem } from '../systems/lock-system.ts';

export const PAIRS_CLIENTS = 50;

export interface PairsRow {
  system: string;
  depth: number;
  pairsPerSec: number;
  serverCpuUsPerPair: number;
  /** This system's figure over Redis's, median of the per-repeat ratios (null for Redis itself). */
  pairsPerSecVsRedis: number | null;
  cpuPerPairVsRedis: number | null;
  runs: PairsRun[];
}

export async function pairsSection(systems: LockSystem[], redis: LockSystem, seconds: number, repeats: number): Promise<PairsRow[]> {
  const all = [redis, ...systems];
  for (const s of all) {
    process.stderr.write(`bench: pairs warm-up: ${s.name}\n`);
    await runPairs(s, PAIRS_CLIENTS, 16, 1_000);
  }
  const rows: PairsRow[] = [];
  for (const depth of [1, 16]) {
    // Baton keyed, Redis, Baton session, etcd...: Redis sits between the systems compared with it.
    const [first, ...rest] = systems;
    const order = first === undefined ? [redis] : [first, redis, ...rest];
    const runs = await alternate(repeats, order, (s) => runPairs(s, PAIRS_CLIENTS, depth, seconds * 1_000), `pairs depth ${depth}`);
    const ref = runs.get(redis.name) ?? [];
    for (const s of all) {
      const mine = runs.get(s.name) ?? [];
      const m = medians(mine);
      const isRef = s === redis;
      rows.push({
        system: s.name,
        depth,
        pairsPerSec: m.pairsPerSec,
        serverCpuUsPerPair: m.serverCpuUsPerPair,
        pairsPerSecVsRedis: isRef ? null : pairedRatio(mine, ref, 'pairsPerSec'),
        cpuPerPairVsRedis: isRef ? null : pairedRatio(mine, ref, 'serverCpuUsPerPair'),
        runs: mine,
      });
    }
  }
  return rows;
}
