// The lock map's lookups alone, two checkouts side by side in one process: a LockMap filed with
// N names (`scale/held/i`, the table grown as one Map and split past 262,144, as a daemon's does)
// and W more (`bench/i`), then 2,000,000 lookups rotating over the W, CPU ns per lookup, 7
// rotated repeats, medians. W under the hot cache's size (16,384) is the pairs' working set the
// cache is for; W far over it (20,000, 200,000) shows what a working set it cannot hold costs.
// Usage: node --max-old-space-size=8000 --import tsx bench/lock-map-ab.ts <old checkout> <new checkout> [W=800] [N=5000000]
import path from 'node:path';
import type { LockMap } from '../lib/engine/lock-map.ts';
import { median } from './stats.ts';

type MapModule = { LockMap: typeof LockMap };
const [oldRoot, newRoot, wArg, nArg] = process.argv.slice(2);
if (oldRoot === undefined || newRoot === undefined) throw new Error('usage: lock-map-ab.ts <old checkout> <new checkout> [W] [N]');
const roots = [path.resolve(oldRoot), path.resolve(newRoot)];
const working = Number(wArg ?? 800);
const held = Number(nArg ?? 5_000_000);
const LOOKUPS = 2_000_000;

const maps = await Promise.all(
  roots.map(async (root) => {
    const { LockMap: Made } = (await import(path.join(root, 'lib/engine/lock-map.ts'))) as MapModule;
    const m = new Made<number>();
    for (let i = 0; i < held; i++) m.set(`scale/held/${i}`, i);
    for (let i = 0; i < working; i++) m.set(`bench/${i}`, i);
    return m;
  }),
);
const keys = Array.from({ length: working }, (_, i) => `bench/${i}`);

/** CPU ns per lookup over LOOKUPS lookups; throws if one answers wrong. */
function run(m: LockMap<number>): number {
  const c0 = process.cpuUsage();
  for (let r = 0; r < LOOKUPS; r++) {
    const i = r % working;
    if (m.get(keys[i] as string) !== i) throw new Error(`wrong answer for ${keys[i]}`);
  }
  const d = process.cpuUsage(c0);
  return ((d.user + d.system) * 1_000) / LOOKUPS;
}

for (const m of maps) run(m);
const ns = maps.map(() => [] as number[]);
for (let r = 0; r < 7; r++) {
  for (let j = 0; j < maps.length; j++) {
    const i = (j + r) % maps.length;
    ns[i]?.push(run(maps[i] as LockMap<number>));
  }
}
const cells = roots.map((root, b) => `${path.basename(root)} ${median(ns[b] ?? []).toFixed(1)} ns`);
console.log(`${held.toLocaleString('en-US')} held, lookups over ${working.toLocaleString('en-US')} names: ${cells.join(' | ')}`);
