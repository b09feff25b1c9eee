// What the top-contended view's tracker (server/lock-views/contention-tracker.ts) costs the lock
// path: the engine alone, no sockets, handovers on contended locks (each pair enqueues a waiter
// behind the holder, then releases: one enqueue and one queued grant per handover, the events
// the tracker tallies), with the listeners a running daemon keeps (metrics, chart history, feed
// ring), without and with the tracker; and the same on 10,000 distinct locks, so each
// five-minute bucket is full and a new lock takes the least one's place (the tracker's slow path).
// Usage: node --import tsx bench/contention-cost.ts
import type { ClaimOwner } from '../lib/engine/claim.ts';
import { LockEngine } from '../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';
import { HistoryRecorder } from '../server/chart-history/history-recorder.ts';
import { createMetrics } from '../server/http/metrics.ts';
import { FeedRing } from '../server/live-feed/feed-ring.ts';
import { ContentionTracker } from '../server/lock-views/contention-tracker.ts';
import { median, round } from './stats.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function measure(tracker: boolean, distinct: number): { usPerHandover: number; handoversPerSec: number } {
  const engine = new LockEngine({ now: () => performance.now() }, new BlockTokenSource(new MemoryCeilingStore()));
  const clock = { now: () => performance.now(), wall: (t: number) => Date.now() - (performance.now() - t) };
  createMetrics(engine, () => ({ keyed: 0, session: 0 }), { role: () => 'active', nodeId: 'bench', instanceId: 'bench' });
  new HistoryRecorder(engine, clock);
  const feed = new FeedRing(clock);
  engine.subscribe((e) => feed.push(e));
  if (tracker) new ContentionTracker(engine, clock);
  const keys = Array.from({ length: distinct }, (_, i) => `hot/${i}`);
  const holders = new Map<string, bigint>();
  for (const key of keys)
    holders.set(key, engine.acquire({ name: key, owner, protocol: 'keyed', client: 'c', leaseMs: 600_000, waitMs: 0, sliding: false }).token);
  const run = (n: number): number => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const key = keys[i % keys.length] as string;
      const waiter = engine.acquire({ name: key, owner, protocol: 'keyed', client: 'w', clientName: 'waiter', leaseMs: 600_000, waitMs: 0, sliding: false });
      engine.release(key, holders.get(key) as bigint);
      holders.set(key, waiter.token);
    }
    return performance.now() - t0;
  };
  run(100_000);
  const samples = Array.from({ length: 5 }, () => run(300_000));
  const ms = median(samples);
  return { usPerHandover: round((ms * 1000) / 300_000, 3), handoversPerSec: Math.round(300_000 / (ms / 1000)) };
}

console.log(
  JSON.stringify({
    tenLocks: { daemonListeners: measure(false, 10), withTracker: measure(true, 10) },
    tenThousandLocks: { daemonListeners: measure(false, 10_000), withTracker: measure(true, 10_000) },
  }),
);
