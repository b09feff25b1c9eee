// The claim census behind the holder, waiter, session and oldest-hold gauges (claim-census.ts):
// exact at the scrape for a table of one slice; for a bigger one, walked in the background in
// slices of at most CENSUS_SLICE claims a loop turn, a scrape serving the last complete walk.
import { describe, expect, it, vi } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { CENSUS_SLICE, ClaimCensus } from './claim-census.ts';
import { createMetrics } from './metrics.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const nothing = { held: { keyed: 0, session: 0 }, waiting: { keyed: 0, session: 0 }, oldestGrantedAt: Number.POSITIVE_INFINITY };

/** `locks` locks, a third held by session claims, every fourth with a keyed waiter. */
function table(locks: number) {
  const f = engineFixture({ blockSize: 1_000n });
  for (let i = 0; i < locks; i++) {
    const session = i % 3 === 0;
    f.engine.acquire({ name: `l${i}`, owner: live, protocol: session ? 'session' : 'keyed', client: 'c', leaseMs: 10_000, waitMs: 0, sliding: session });
    if (i % 4 === 0) f.engine.acquire({ name: `l${i}`, owner: live, protocol: 'keyed', client: 'w', leaseMs: 10_000, waitMs: 0, sliding: false });
  }
  return f;
}

const keyed = (name: string, leaseMs = 10_000) => ({ name, owner: live, protocol: 'keyed' as const, client: 'c', leaseMs, waitMs: 0, sliding: false });

describe('ClaimCensus of a table within one slice', () => {
  it('is exact at each read: grants, queueing, releases, expiries and a reset', () => {
    const f = engineFixture({ blockSize: 1_000n });
    const census = new ClaimCensus(f.engine);
    expect(census.read()).toEqual(nothing);
    const a = f.engine.acquire(keyed('a', 500));
    f.clock.advance(100);
    f.engine.acquire({ ...keyed('b'), protocol: 'session', sliding: true });
    f.engine.acquire(keyed('a'));
    expect(census.read()).toEqual({ held: { keyed: 1, session: 1 }, waiting: { keyed: 1, session: 0 }, oldestGrantedAt: 1_000 });
    f.engine.release('a', a.token);
    // The waiter took `a` at 1,100: the session claim on `b` (granted at 1,100 too) and it are the holds.
    expect(census.read()).toEqual({ held: { keyed: 1, session: 1 }, waiting: { keyed: 0, session: 0 }, oldestGrantedAt: 1_100 });
    f.tick(20_000);
    // Both leases ran out (the session claim was never touched).
    expect(census.read()).toEqual(nothing);
    f.engine.acquire(keyed('c'));
    f.engine.reset();
    expect(census.read()).toEqual(nothing);
    expect(census.maxVisitedInTurn).toBeLessThanOrEqual(CENSUS_SLICE);
  });
});

describe('ClaimCensus of a table bigger than a slice', () => {
  it('never visits more than a slice (plus one queue) in a loop turn, and lets the loop run between', async () => {
    const f = table(100);
    const census = new ClaimCensus(f.engine, { slice: 10 });
    let ran = false;
    setImmediate(() => (ran = true));
    const first = await census.read();
    expect(ran).toBe(true);
    expect(first).toEqual({ held: { keyed: 66, session: 34 }, waiting: { keyed: 25, session: 0 }, oldestGrantedAt: 1_000 });
    // A slice stops before the lock that would pass it; that lock's queue (one waiter here) is visited whole.
    expect(census.maxVisitedInTurn).toBeGreaterThan(0);
    expect(census.maxVisitedInTurn).toBeLessThanOrEqual(10 + 1);
    census.stop();
  });

  it('serves the last complete walk without walking, and walks again in the background while scraped', async () => {
    const f = table(40);
    const census = new ClaimCensus(f.engine, { slice: 8, refreshMs: 30 });
    const walks = vi.spyOn(f.engine, 'allLocks');
    expect((await census.read()).held).toEqual({ keyed: 26, session: 14 });
    expect(walks).toHaveBeenCalledTimes(1);
    f.engine.acquire(keyed('new'));
    // Served at once from the last walk (the new lock is not in it yet), with no walk of its own.
    const served = census.read();
    expect(served).not.toBeInstanceOf(Promise);
    expect((served as Awaited<typeof served>).held.keyed).toBe(26);
    expect(walks).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => {
      expect((census.read() as Awaited<ReturnType<typeof census.read>>).held.keyed).toBe(27);
    });
    expect(walks.mock.calls.length).toBeGreaterThanOrEqual(2);
    census.stop();
  });

  it('stops walking without scrapes, and then does not serve the old walk', async () => {
    const f = table(40);
    const census = new ClaimCensus(f.engine, { slice: 8, refreshMs: 5, idleMs: 30 });
    await census.read();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const walks = census.walks;
    await new Promise((resolve) => setTimeout(resolve, 50));
    // No walk in the last 50 ms: the background walks stopped 30 ms after the scrape.
    expect(census.walks).toBe(walks);
    f.engine.acquire(keyed('late'));
    const read = census.read();
    expect(read).toBeInstanceOf(Promise);
    expect((await read).held.keyed).toBe(27);
    census.stop();
  });

  it('does not serve a walk from before a reset', async () => {
    const f = table(40);
    const census = new ClaimCensus(f.engine, { slice: 8, refreshMs: 60_000 });
    expect((await census.read()).held.keyed).toBe(26);
    f.engine.reset();
    for (let i = 0; i < 20; i++) f.engine.acquire(keyed(`after${i}`));
    // 20 locks held after the reset (and the 40 idle locks of before it, parked): more than a slice.
    const read = census.read();
    expect(read).toBeInstanceOf(Promise);
    expect(await read).toEqual({ held: { keyed: 20, session: 0 }, waiting: { keyed: 0, session: 0 }, oldestGrantedAt: 1_000 });
    census.stop();
  });

  it('starts over when a reset comes during a walk', async () => {
    const f = table(40);
    const census = new ClaimCensus(f.engine, { slice: 8, refreshMs: 60_000 });
    const walking = census.read();
    await new Promise<void>((resolve) => setImmediate(resolve));
    f.engine.reset();
    for (let i = 0; i < 20; i++) f.engine.acquire(keyed(`after${i}`));
    expect((await walking).held).toEqual({ keyed: 20, session: 0 });
    expect(census.walks).toBe(2);
    census.stop();
  });
});

describe('the census gauges', () => {
  it('are read once per scrape for the four gauges, exact for a small table', async () => {
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
    expect(text).toContain('baton_locks_held{protocol="session"} 4');
    expect(text).toContain('baton_waiters{protocol="keyed"} 3');
    expect(text).toContain('baton_sessions{protocol="keyed"} 9');
    await registry.metrics();
    expect(walks).toHaveBeenCalledTimes(2);
    registry.stopCensus();
  });

  it('do not walk a table bigger than a slice at a scrape once a walk is complete', async () => {
    const f = table(CENSUS_SLICE + 500);
    const registry = createMetrics(f.engine, () => ({ keyed: 0, session: 0 }), { role: () => 'active', nodeId: 'n', instanceId: 'i' });
    const walks = vi.spyOn(f.engine, 'allLocks');
    const first = await registry.metrics();
    expect(first).toContain(`baton_locks_held{protocol="session"} ${Math.ceil((CENSUS_SLICE + 500) / 3)}`);
    expect(walks).toHaveBeenCalledTimes(1);
    await registry.metrics();
    await registry.metrics();
    expect(walks).toHaveBeenCalledTimes(1);
    registry.stopCensus();
  });
});
