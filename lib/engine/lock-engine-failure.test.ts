// The engine when things around it fail: a grant nobody can take, a token that cannot be issued.
import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import type { GrantEvent, LockEvent } from './events.ts';
import { LockEngine } from './lock-engine.ts';
import { Owner, engineFixture } from './testing/engine-fixture.ts';
import { BlockTokenSource, type CeilingStore } from '../tokens/token-source.ts';

describe('lock engine under failures', () => {
  it('reports the real cause and latency of a handover that skipped an undeliverable waiter', () => {
    const { engine, fixed, clock } = engineFixture();
    const events: LockEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const live = new Owner();
    const holder = fixed('a', live);
    fixed('a', new Owner(false));
    const next = fixed('a', live);
    clock.advance(5);
    engine.release('a', holder.token);
    const grants = events.filter((e): e is GrantEvent => e.type === 'grant');
    const last = grants[grants.length - 1] as GrantEvent;
    expect(last.claimId).toBe(next.id);
    expect([last.handoverCause, last.handoverMs]).toEqual(['release', 0]);
  });

  it('changes nothing when no token can be issued for a handover, and goes on once the store works again', () => {
    let broken = false;
    let ceiling = 0n;
    const store: CeilingStore = {
      load: () => ceiling,
      save: (c) => {
        if (broken) throw new Error('EIO: disk gone');
        ceiling = c;
      },
    };
    const engine = new LockEngine(new FakeClock(1_000), new BlockTokenSource(store, 1n));
    const owner = new Owner();
    const holder = engine.acquire({ name: 'a', owner, protocol: 'keyed', client: 'k', leaseMs: 10_000, waitMs: 0, sliding: false });
    const waiter = engine.acquire({ name: 'a', owner, protocol: 'keyed', client: 'k', leaseMs: 10_000, waitMs: 0, sliding: false });
    broken = true;
    // The release itself happens (its holder is done); the handover waits for a token.
    expect(engine.release('a', holder.token)).toBe('ok');
    // The waiter is still queued and was never told anything: nothing was granted to nobody.
    expect(waiter.state).toBe('waiting');
    expect(engine.lock('a')?.holder).toBeNull();
    expect(engine.lock('a')?.queue()).toEqual([waiter]);
    expect(engine.heldGrantCount).toBe(1);
    expect(() => engine.acquire({ name: 'b', owner, protocol: 'keyed', client: 'k', leaseMs: 10_000, waitMs: 0, sliding: false })).toThrow(
      expect.objectContaining({ reason: 'storage-unavailable' }),
    );
    expect(engine.tokenRefusal?.reason).toBe('storage-unavailable');
    expect(engine.lock('b')).toBeUndefined();
    engine.retryHeldGrants();
    expect(waiter.state).toBe('waiting');
    broken = false;
    const other = engine.acquire({ name: 'b', owner, protocol: 'keyed', client: 'k', leaseMs: 10_000, waitMs: 0, sliding: false });
    expect(other.state).toBe('holding');
    expect(other.token).toBeGreaterThan(holder.token);
    expect(engine.tokenRefusal).toBeNull();
    // The held handover goes on at the next retry (the daemon's timer).
    engine.retryHeldGrants();
    expect(waiter.state).toBe('holding');
    expect(waiter.token).toBeGreaterThan(other.token);
    expect(engine.heldGrantCount).toBe(0);
  });
});
