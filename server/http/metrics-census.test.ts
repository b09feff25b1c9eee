// The per-protocol holder and waiter gauges walk the lock table at scrape time: once per scrape
// for all three gauges, and in slices with the event loop let go between them, so a scrape of a
// large table never holds the lock path for the whole walk.
import { describe, expect, it, vi } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { claimCensus, createMetrics } from './metrics.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function table(locks: number) {
  const f = engineFixture({ blockSize: 1_000n });
  for (let i = 0; i < locks; i++) {
    const session = i % 3 === 0;
    f.engine.acquire({ name: `l${i}`, owner: live, protocol: session ? 'session' : 'keyed', client: 'c', leaseMs: 10_000, waitMs: 0, sliding: session });
    if (i % 4 === 0) f.engine.acquire({ name: `l${i}`, owner: live, protocol: 'keyed', client: 'w', leaseMs: 10_000, waitMs: 0, sliding: false });
  }
  return f;
}

describe('claimCensus', () => {
  it('counts holders and waiters by protocol across slices', async () => {
    const f = table(10);
    const census = await claimCensus(f.engine, 3);
    // Every holder was granted at the fixture clock's start, 1,000 ms.
    expect(census).toEqual({ held: { keyed: 6, session: 4 }, waiting: { keyed: 3, session: 0 }, oldestGrantedAt: 1_000 });
  });

  it('lets the event loop run between slices, and not when the table fits in one', async () => {
    const f = table(10);
    for (const [slice, yielded] of [
      [3, true],
      [100, false],
    ] as const) {
      let ran = false;
      const census = claimCensus(f.engine, slice);
      setImmediate(() => (ran = true));
      await census;
      expect(ran, `slice ${slice}`).toBe(yielded);
    }
  });

  it('says when nothing is held', async () => {
    const f = engineFixture();
    expect(await claimCensus(f.engine)).toEqual({
      held: { keyed: 0, session: 0 },
      waiting: { keyed: 0, session: 0 },
      oldestGrantedAt: Number.POSITIVE_INFINITY,
    });
  });

  it('is walked once per scrape for the four gauges that read it', async () => {
    const f = table(10);
    const registry = createMetrics(f.engine, () => ({ keyed: 0, session: 0 }), {
      role: () => 'active',
      nodeId: 'n',
      instanceId: 'i',
      engineNow: () => f.clock.now(),
    });
    f.clock.advance(2_500);
    const walks = vi.spyOn(f.engine, 'allLocks');
    const text = await registry.metrics();
    expect(walks).toHaveBeenCalledTimes(1);
    expect(text).toContain('baton_oldest_hold_seconds 2.5');
    expect(text).toContain('baton_locks_held{protocol="keyed"} 6');
    expect(text).toContain('baton_waiters{protocol="keyed"} 3');
    expect(text).toContain('baton_sessions{protocol="keyed"} 9');
    await registry.metrics();
    expect(walks).toHaveBeenCalledTimes(2);
  });
});
