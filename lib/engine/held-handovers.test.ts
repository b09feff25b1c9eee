// Handovers held during a graceful handoff: a lock that comes free keeps its queue and gets no
// new holder (so no grant is made after the last replicated event), and is handed on when the
// handoff is called off.
import { describe, expect, it } from 'vitest';
import type { LockEvent } from './events.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

describe('holdHandovers', () => {
  it('a lock that comes free while handovers are held stays free with its queue, and goes to its head on release', () => {
    const { engine } = engineFixture();
    const holder = new Owner();
    const waiter = new Owner();
    const events: LockEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const held = engine.acquire({ name: 'x', owner: holder, protocol: 'session', client: 'h', leaseMs: 1000, waitMs: 0, sliding: true });
    const queued = engine.acquire({ name: 'x', owner: waiter, protocol: 'keyed', client: 'w', leaseMs: 1000, waitMs: 0, sliding: false });
    engine.holdHandovers();
    engine.end(held);
    expect(engine.lock('x')?.holder).toBeNull();
    expect(engine.lock('x')?.head).toBe(queued);
    expect(waiter.granted).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['grant', 'enqueue', 'release']);
    engine.releaseHandovers();
    expect(waiter.granted).toEqual([queued]);
    expect(engine.lock('x')?.holder).toBe(queued);
    expect(queued.token).toBeGreaterThan(held.token);
  });

  it('a lock with nobody waiting is dropped as usual, and releasing with nothing held changes nothing', () => {
    const { engine } = engineFixture();
    const c = engine.acquire({ name: 'y', owner: new Owner(), protocol: 'keyed', client: 'h', leaseMs: 1000, waitMs: 0, sliding: false });
    engine.holdHandovers();
    expect(engine.release('y', c.token)).toBe('ok');
    expect(engine.lock('y')).toBeUndefined();
    engine.releaseHandovers();
    engine.releaseHandovers();
    expect(engine.lockCount).toBe(0);
  });

  it('after a reset (the handoff went through) releasing hands nothing on', () => {
    const { engine } = engineFixture();
    const waiter = new Owner();
    const held = engine.acquire({ name: 'z', owner: new Owner(), protocol: 'session', client: 'h', leaseMs: 1000, waitMs: 0, sliding: true });
    engine.acquire({ name: 'z', owner: waiter, protocol: 'keyed', client: 'w', leaseMs: 1000, waitMs: 0, sliding: false });
    engine.holdHandovers();
    engine.end(held);
    engine.reset();
    engine.releaseHandovers();
    expect(waiter.granted).toEqual([]);
    expect(engine.lockCount).toBe(0);
  });
});
