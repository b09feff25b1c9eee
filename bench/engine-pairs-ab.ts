// The engine alone, two checkouts side by side in one process, alternating: CPU time per
// uncontended acquire+release pair on 800 rotating keys with one listener (a daemon always has
// some), on an empty table and with 100,000 other locks held. A hot-path check of an engine
// change that a loaded machine still answers: both builds share the process, its caches and its
// load, run after run (issue 29: "no cost on the hot path").
// Usage: node --import tsx bench/engine-pairs-ab.ts <old checkout> <new checkout> [runs=9]
import path from 'node:path';
import type { ClaimOwner } from '../lib/engine/claim.ts';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import type { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { median } from './stats.ts';

type EngineModule = { LockEngine: typeof LockEngine };
type TokenModule = { BlockTokenSource: typeof BlockTokenSource; MemoryCeilingStore: typeof MemoryCeilingStore };

const [oldRoot, newRoot, runsArg] = process.argv.slice(2);
if (oldRoot === undefined || newRoot === undefined) throw new Error('usage: engine-pairs-ab.ts <old checkout> <new checkout> [runs]');
const roots = [path.resolve(oldRoot), path.resolve(newRoot)];
const runs = Number(runsArg ?? 9);
const PAIRS = 300_000;
const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

const makers = await Promise.all(
  roots.map(async (root) => {
    const { LockEngine: Engine } = (await import(path.join(root, 'lib/engine/lock-engine.ts'))) as EngineModule;
    const t = (await import(path.join(root, 'lib/tokens/token-source.ts'))) as TokenModule;
    return (background: number): LockEngine => {
      const e = new Engine({ now: () => performance.now() }, new t.BlockTokenSource(new t.MemoryCeilingStore()));
      e.subscribe(() => {});
      for (let i = 0; i < background; i++) {
        e.acquire({ name: `held/${i}`, owner, protocol: 'keyed', client: 'c', leaseMs: 600_000 + i, waitMs: 0, sliding: false });
      }
      return e;
    };
  }),
);

const keys = Array.from({ length: 800 }, (_, i) => `bench/${i}`);
const request = { name: '', owner, protocol: 'keyed' as const, client: 'c', clientName: null, leaseMs: 30_000, waitMs: 0, sliding: false };

/** CPU nanoseconds per pair (user + system: the collector's threads count too). */
function run(e: LockEngine): number {
  const c0 = process.cpuUsage();
  for (let i = 0; i < PAIRS; i++) {
    request.name = keys[i % keys.length] as string;
    const c = e.acquire(request);
    e.release(request.name, c.token);
  }
  const d = process.cpuUsage(c0);
  return ((d.user + d.system) / PAIRS) * 1_000;
}

for (const background of [0, 100_000]) {
  const engines = makers.map((make) => make(background));
  for (const e of engines) run(e);
  const samples = engines.map(() => [] as number[]);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < engines.length; i++) samples[i]?.push(run(engines[i] as LockEngine));
  }
  const line = roots.map((root, i) => `${root}: ${median(samples[i] ?? []).toFixed(0)} ns/pair`).join(' | ');
  console.log(`${background.toLocaleString('en-US')} other locks held: ${line}`);
}
