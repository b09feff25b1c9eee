// Section 2: contended handover, 50 clients looping on one key: latency from a holder's release
// to the next holder's grant (p50, p99, max) and fairness (most over fewest grants per client),
// for Baton (keyed and session), Redis retry loops (10 ms and node-redlock's 200 ms) and etcd's
// watch-based election recipe; ratios against the 10 ms Redis loop, repeat by repeat.
import { runHandover, type HandoverRun } from '../handover-load.ts';
import { alternate, medians, pairedRatio } from '../side-by-side.ts';
import type { LockSystem } from '../systems/lock-system.ts';

export const HANDOVER_CLIENTS = 50;

export interface HandoverRow extends Omit<HandoverRun, 'minGrants' | 'maxGrants'> {
  system: string;
  p99VsRedis: number | null;
  runs: HandoverRun[];
}

export async function handoverSection(systems: LockSystem[], redis: LockSystem, seconds: number, repeats: number): Promise<HandoverRow[]> {
  const [first, ...rest] = systems;
  const order = first === undefined ? [redis] : [first, redis, ...rest];
  for (const s of order) {
    process.stderr.write(`bench: handover warm-up: ${s.name}\n`);
    await runHandover(s, HANDOVER_CLIENTS, 500);
  }
  const runs = await alternate(repeats, order, (s) => runHandover(s, HANDOVER_CLIENTS, seconds * 1_000), 'handover');
  const ref = runs.get(redis.name) ?? [];
  return order.map((s) => {
    const mine = runs.get(s.name) ?? [];
    const m = medians(mine);
    return {
      system: s.name,
      handovers: m.handovers,
      selfRegrants: m.selfRegrants,
      p50Ms: m.p50Ms,
      p99Ms: m.p99Ms,
      maxMs: m.maxMs,
      waitP50Ms: m.waitP50Ms,
      waitP99Ms: m.waitP99Ms,
      waitMaxMs: m.waitMaxMs,
      fairness: m.fairness,
      p99VsRedis: s === redis ? null : pairedRatio(mine, ref, 'p99Ms'),
      runs: mine,
    };
  });
}
