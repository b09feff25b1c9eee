// The engine alone, no sockets: acquire+release pairs per second on distinct keys, with a
// listener attached, first on an empty table and then with 100,000 other locks held under
// leases (one deadline heap: the cost per pair should grow with log n, not n).
// Usage: node --import tsx bench/engine-pairs.ts
import { LockEngine } from '../lib/engine/lock-engine.ts';
import type { ClaimOwner } from '../lib/engine/claim.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { median, round } from './stats.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function measure(background: number): { usPerPair: number; pairsPerSec: number } {
  const engine = new LockEngine({ now: () => performance.now() }, new BlockTokenSource(new MemoryCeilingStore()));
  let events = 0;
  engine.subscribe(() => events++);
  for (let i = 0; i < background; i++) engine.acquire(`held/${i}`, owner, 'keyed', 'c', 600_000 + i, 0, false);
  const keys = Array.from({ length: 800 }, (_, i) => `bench/${i}`);
  const run = (n: number): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const key = keys[i % keys.length] as string;
      const c = engine.acquire(key, owner, 'keyed', 'c', 30_000, 0, false);
      engine.release(key, c.token);
    }
    return performance.now() - t0;
  };
  run(200_000);
  const samples = Array.from({ length: 5 }, () => run(500_000));
  const ms = median(samples);
  if (engine.heldCount !== background) throw new Error('background locks were lost');
  return { usPerPair: round((ms * 1000) / 500_000, 3), pairsPerSec: Math.round(500_000 / (ms / 1000)) };
}

console.log(JSON.stringify({ emptyTable: measure(0), with100kLeasedLocks: measure(100_000) }));
