// The engine alone, no sockets: acquire+release pairs per second on distinct keys, with a
// listener attached, first on an empty table and then with 100,000 other locks held under
// leases (one deadline heap: the cost per pair should grow with log n, not n).
// A third figure attaches what a running daemon keeps on the engine with no dashboard open
// (metrics, the chart history, the feed ring), side by side with the bare engine.
// Usage: node --import tsx bench/engine-pairs.ts
import { LockEngine } from '../lib/engine/lock-engine.ts';
import type { ClaimOwner } from '../lib/engine/claim.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { createMetrics } from '../server/http/metrics.ts';
import { HistoryRecorder } from '../server/chart-history/history-recorder.ts';
import { FeedRing } from '../server/live-feed/feed-ring.ts';
import { median, round } from './stats.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function measure(background: number, daemonListeners = false): { usPerPair: number; pairsPerSec: number } {
  const engine = new LockEngine({ now: () => performance.now() }, new BlockTokenSource(new MemoryCeilingStore()));
  let events = 0;
  engine.subscribe(() => events++);
  if (daemonListeners) {
    const clock = { now: () => performance.now(), wall: (t: number) => Date.now() - (performance.now() - t) };
    createMetrics(engine, () => ({ keyed: 0, session: 0 }), { role: () => 'active', nodeId: 'bench', instanceId: 'bench' });
    new HistoryRecorder(engine, clock);
    const feed = new FeedRing(clock);
    engine.subscribe((e) => feed.push(e));
  }
  for (let i = 0; i < background; i++)
    engine.acquire({ name: `held/${i}`, owner, protocol: 'keyed', client: 'c', leaseMs: 600_000 + i, waitMs: 0, sliding: false });
  const keys = Array.from({ length: 800 }, (_, i) => `bench/${i}`);
  const run = (n: number): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const key = keys[i % keys.length] as string;
      const c = engine.acquire({ name: key, owner, protocol: 'keyed', client: 'c', leaseMs: 30_000, waitMs: 0, sliding: false });
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

console.log(JSON.stringify({ emptyTable: measure(0), with100kLeasedLocks: measure(100_000), emptyTableWithDaemonListeners: measure(0, true) }));
