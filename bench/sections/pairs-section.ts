// Section 1: uncontended acquire+release pairs per second and server CPU per pair, 50 clients on
// distinct keys, one pair at a time and 16 in flight per client, for Baton (keyed and session),
// the floor (the bare Node line server behind the same clients), Redis and etcd, alternating
// within each repeat; ratios against Redis, and Baton's CPU per pair against the floor of its
// protocol, repeat by repeat.
import { runPairs, type PairsRun } from '../pairs-load.ts';
import { alternate, medians, pairedRatio } from '../side-by-side.ts';
import type { LockSystem } from '../systems/lock-system.ts';

export const PAIRS_CLIENTS = 50;

export interface PairsEntry {
  readonly system: LockSystem;
  /** The floor this system's CPU per pair is divided by (one of the entries, run like them). */
  readonly floor?: LockSystem;
}

export interface PairsRow {
  system: string;
  depth: number;
  pairsPerSec: number;
  serverCpuUsPerPair: number;
  /** This system's figure over Redis's, median of the per-repeat ratios (null for Redis itself). */
  pairsPerSecVsRedis: number | null;
  cpuPerPairVsRedis: number | null;
  /** The floor compared with: its own name for a floor's row, null for a row compared with none. */
  floor: string | null;
  /** CPU per pair over the floor's, median of the per-repeat ratios (null for the floor itself, or none). */
  cpuPerPairVsFloor: number | null;
  runs: PairsRun[];
}

export async function pairsSection(entries: PairsEntry[], redis: LockSystem, seconds: number, repeats: number): Promise<PairsRow[]> {
  const systems = entries.map((e) => e.system);
  const floors = new Set(entries.flatMap((e) => (e.floor === undefined ? [] : [e.floor])));
  for (const f of floors) if (!systems.includes(f)) throw new Error(`pairs: the floor ${f.name} is not among the systems run`);
  const all = [redis, ...systems];
  for (const s of all) {
    process.stderr.write(`bench: pairs warm-up: ${s.name}\n`);
    await runPairs(s, PAIRS_CLIENTS, 16, 1_000);
  }
  const rows: PairsRow[] = [];
  for (const depth of [1, 16]) {
    // Baton keyed, Redis, the keyed floor, ...: Redis sits between the systems compared with it.
    const [first, ...rest] = systems;
    const order = first === undefined ? [redis] : [first, redis, ...rest];
    const runs = await alternate(repeats, order, (s) => runPairs(s, PAIRS_CLIENTS, depth, seconds * 1_000), `pairs depth ${depth}`);
    const ref = runs.get(redis.name) ?? [];
    for (const s of all) {
      const mine = runs.get(s.name) ?? [];
      const m = medians(mine);
      const isRef = s === redis;
      const floor = entries.find((e) => e.system === s)?.floor;
      rows.push({
        system: s.name,
        depth,
        pairsPerSec: m.pairsPerSec,
        serverCpuUsPerPair: m.serverCpuUsPerPair,
        pairsPerSecVsRedis: isRef ? null : pairedRatio(mine, ref, 'pairsPerSec'),
        cpuPerPairVsRedis: isRef ? null : pairedRatio(mine, ref, 'serverCpuUsPerPair'),
        floor: floors.has(s) ? s.name : (floor?.name ?? null),
        cpuPerPairVsFloor: floor === undefined ? null : pairedRatio(mine, runs.get(floor.name) ?? [], 'serverCpuUsPerPair'),
        runs: mine,
      });
    }
  }
  return rows;
}
