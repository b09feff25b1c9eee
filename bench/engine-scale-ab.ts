// The engine alone at each table size, two checkouts side by side in one process: CPU time per
// uncontended acquire+release pair (16 in flight over 800 rotating keys, 30 s leases, one
// listener) on an engine holding N other keyed locks of 600 s (issue 29's way: one lease length,
// taken in order), against the same build holding 1,000. Each repeat runs all four engines in turn
// (old and new, at N and at 1,000) and takes each build's N / 1,000 ratio; medians of the repeats.
// Both builds share the process, its caches and the machine's load, so the ratios compare what
// the table's size costs each build (issue 29: "the same CPU per pair with 5,000,000 locks held as
// with 1,000"). The daemon's figure (npm run bench:scale) adds the sockets and the protocol.
// `keys`: how many names the pairs rotate over (800 by default, the daemon bench's 50 x 16; more
// than the lock map's hot cache of 4,096 shows what a working set it cannot hold costs).
// Usage: node --max-old-space-size=8000 --import tsx bench/engine-scale-ab.ts <old checkout> <new checkout> [sizes=100000,1000000,5000000] [runs=7] [keys=800]
import path from 'node:path';
import type { ClaimOwner } from '../lib/engine/claim.ts';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import type { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { median, round } from './stats.ts';

type EngineModule = { LockEngine: typeof LockEngine };
type TokenModule = { BlockTokenSource: typeof BlockTokenSource; MemoryCeilingStore: typeof MemoryCeilingStore };

const [oldRoot, newRoot, sizesArg, runsArg, keysArg] = process.argv.slice(2);
if (oldRoot === undefined || newRoot === undefined) throw new Error('usage: engine-scale-ab.ts <old checkout> <new checkout> [sizes] [runs]');
const roots = [path.resolve(oldRoot), path.resolve(newRoot)];
const sizes = (sizesArg ?? '100000,1000000,5000000').split(',').map(Number);
const runs = Number(runsArg ?? 7);
const REFERENCE = 1_000;
const PAIRS = 400_000;
const DEPTH = 16;
const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

const makers = await Promise.all(
  roots.map(async (root) => {
    const { LockEngine: Engine } = (await import(path.join(root, 'lib/engine/lock-engine.ts'))) as EngineModule;
    const t = (await import(path.join(root, 'lib/tokens/token-source.ts'))) as TokenModule;
    return (held: number): LockEngine => {
      const e = new Engine({ now: () => performance.now() }, new t.BlockTokenSource(new t.MemoryCeilingStore()));
      e.subscribe(() => {});
      const request = { name: '', owner, protocol: 'keyed' as const, client: '127.0.0.1:1', clientName: null, leaseMs: 600_000, waitMs: 0, sliding: false };
      for (let i = 0; i < held; i++) {
        request.name = `scale/held/${i}`;
        e.acquire(request);
      }
      return e;
    };
  }),
);

const keys = Array.from({ length: Number(keysArg ?? 800) }, (_, i) => `bench/${i}`);
const request = { name: '', owner, protocol: 'keyed' as const, client: '127.0.0.1:2', clientName: null, leaseMs: 30_000, waitMs: 0, sliding: false };
const tokens: bigint[] = new Array(DEPTH).fill(0n);

/** CPU nanoseconds per pair (user + system: the collector's threads count too). */
function run(e: LockEngine): number {
  const c0 = process.cpuUsage();
  let k = 0;
  for (let i = 0; i < PAIRS; i += DEPTH) {
    for (let d = 0; d < DEPTH; d++) {
      request.name = keys[(k + d) % keys.length] as string;
      tokens[d] = e.acquire(request).token;
    }
    for (let d = 0; d < DEPTH; d++) e.release(keys[(k + d) % keys.length] as string, tokens[d] as bigint);
    e.advance();
    k += DEPTH;
  }
  const d = process.cpuUsage(c0);
  return ((d.user + d.system) / PAIRS) * 1_000;
}

const label = (root: string) => path.basename(root);
const refs = makers.map((make) => make(REFERENCE));
console.log(
  `engine alone, ${PAIRS.toLocaleString('en-US')} pairs per run over ${keys.length.toLocaleString('en-US')} names, ${DEPTH} in flight, ${runs} repeats; load average ${process.env.LOADAVG ?? ''}`,
);
for (const size of sizes) {
  const bigs = makers.map((make) => make(size));
  const all = [...refs, ...bigs];
  for (const e of all) run(e);
  const ns = all.map(() => [] as number[]);
  const ratios = makers.map(() => [] as number[]);
  for (let r = 0; r < runs; r++) {
    // Rotate the order each repeat, so a neighbour's burst does not always land on one engine.
    const out = new Array<number>(all.length);
    for (let j = 0; j < all.length; j++) {
      const i = (j + r) % all.length;
      out[i] = run(all[i] as LockEngine);
      ns[i]?.push(out[i] as number);
    }
    for (let b = 0; b < makers.length; b++) ratios[b]?.push((out[makers.length + b] as number) / (out[b] as number));
  }
  const cells = roots.map(
    (root, b) =>
      `${label(root)}: ${median(ns[makers.length + b] ?? []).toFixed(0)} ns/pair (1,000 held: ${median(ns[b] ?? []).toFixed(0)}), ${round(median(ratios[b] ?? []))}x`,
  );
  console.log(`${size.toLocaleString('en-US')} held | ${cells.join(' | ')}`);
  bigs.length = 0;
}
