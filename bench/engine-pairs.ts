// The engine alone, no sockets: acquire+release pairs per second on distinct keys, with a
// metrics-like listener attached. Shows how much of the per-pair budget the engine spends.
import { LockEngine } from '../lib/engine/lock-engine.ts';
import type { Claim, ClaimOwner } from '../lib/engine/claim.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const engine = new LockEngine({ now: () => performance.now() }, new BlockTokenSource(new MemoryCeilingStore()));
let events = 0;
engine.subscribe(() => events++);
const keys = Array.from({ length: 800 }, (_, i) => `bench/${i}`);
function run(n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const key = keys[i % keys.length] as string;
    const c: Claim = engine.acquire(key, owner, 'keyed', '127.0.0.1:1', 30_000, 0, false);
    engine.release(key, c.token);
  }
  return performance.now() - t0;
}
run(200_000);
const samples: number[] = [];
for (let r = 0; r < 5; r++) samples.push(run(1_000_000));
samples.sort((a, b) => a - b);
const median = samples[2] as number;
console.log(JSON.stringify({ pairsPerSec: Math.round(1e6 / (median / 1000)), usPerPair: +(median / 1e6 * 1000).toFixed(3), events }));
