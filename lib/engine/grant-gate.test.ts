// The grant gate: no path grants once the grant window has passed, whatever runs first after a
// pause (a client line, the engine's timer, an admin action, a release). Each test plays one
// order of events after a freeze on a FakeClock: the window was open until 1,800, and the
// process wakes at 3,500 with every deadline in between overdue.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GrantEvent, LockEvent } from './events.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

function pausedEngine() {
  const f = engineFixture();
  const grants: GrantEvent[] = [];
  f.engine.subscribe((e: LockEvent) => {
    if (e.type === 'grant') grants.push(e);
  });
  f.engine.setGrantWindow(1_800);
  return { ...f, grants };
}

describe('the grant gate after a freeze', () => {
  it('a client line that comes before any timer waits instead of being granted a free lock, and no token is issued', () => {
    const { engine, clock, fixed, grants } = pausedEngine();
    const before = fixed('free', new Owner());
    expect(engine.release('free', before.token)).toBe('ok');
    const high = engine.tokenHighWater;
    clock.advance(2_500);
    const owner = new Owner();
    const late = fixed('free', owner, 30_000, 20_000);
    expect(late.state).toBe('waiting');
    expect(owner.granted).toEqual([]);
    expect(engine.tokenHighWater).toBe(high);
    expect(grants.map((g) => g.claimId)).toEqual([before.id]);
    expect(engine.heldGrantCount).toBe(1);
  });

  it('the engine timer expiring a lease does not hand the lock to the next waiter', () => {
    const { engine, clock, fixed, grants } = pausedEngine();
    const holder = fixed('x', new Owner(), 1_000);
    const waiterOwner = new Owner();
    const waiter = fixed('x', waiterOwner);
    clock.advance(2_500);
    engine.advance();
    expect(holder.state).toBe('ended');
    expect(waiter.state).toBe('waiting');
    expect(waiterOwner.granted).toEqual([]);
    expect(engine.lock('x')?.holder).toBeNull();
    expect(grants).toHaveLength(1);
  });

  it('an expiry found by the catch-up of another request is not handed on either', () => {
    const { clock, fixed, grants } = pausedEngine();
    fixed('x', new Owner(), 1_000);
    const waiter = fixed('x', new Owner());
    clock.advance(2_500);
    fixed('y', new Owner());
    expect(waiter.state).toBe('waiting');
    expect(grants).toHaveLength(1);
  });

  it('an admin force-release ends the holder but grants nothing', () => {
    const { engine, clock, fixed, grants } = pausedEngine();
    const holder = fixed('x', new Owner(), 60_000);
    const waiter = fixed('x', new Owner());
    clock.advance(2_500);
    const result = engine.forceRelease('x');
    expect(result.ok).toBe(true);
    expect(holder.state).toBe('ended');
    expect(waiter.state).toBe('waiting');
    expect(grants).toHaveLength(1);
  });

  it("a holder's release or disconnect frees the lock and grants nothing", () => {
    const { engine, clock, fixed, sliding, grants } = pausedEngine();
    const a = fixed('a', new Owner(), 60_000);
    const aNext = fixed('a', new Owner());
    const s = sliding('s', new Owner(), 60_000);
    const sNext = fixed('s', new Owner());
    clock.advance(2_500);
    expect(engine.release('a', a.token)).toBe('ok');
    engine.end(s);
    expect([aNext.state, sNext.state]).toEqual(['waiting', 'waiting']);
    expect(grants).toHaveLength(2);
  });

  it('a kick removes the waiter and hands nothing on; releaseHandovers cannot open a passed window', () => {
    const { engine, clock, fixed, grants } = pausedEngine();
    fixed('x', new Owner(), 60_000);
    const first = fixed('x', new Owner());
    const second = fixed('x', new Owner());
    clock.advance(2_500);
    expect(engine.kick('x', first.id)).toBe(true);
    engine.releaseHandovers();
    engine.retryHeldGrants();
    expect(second.state).toBe('waiting');
    expect(grants).toHaveLength(1);
  });

  it('once the window is renewed, the held locks go to the head of their queues with new tokens', () => {
    const { engine, clock, fixed, grants } = pausedEngine();
    const holder = fixed('x', new Owner(), 1_000);
    const waiter = fixed('x', new Owner());
    clock.advance(2_500);
    const newcomer = fixed('free', new Owner());
    engine.advance();
    expect([waiter.state, newcomer.state]).toEqual(['waiting', 'waiting']);
    engine.setGrantWindow(clock.now() + 800);
    engine.retryHeldGrants();
    expect([waiter.state, newcomer.state]).toEqual(['holding', 'holding']);
    expect(waiter.token).toBeGreaterThan(holder.token);
    expect(grants.every((g) => g.at < 1_800 || g.at >= 3_500)).toBe(true);
    expect(engine.heldGrantCount).toBe(0);
  });

  it('a request that waited for the gate leaves the queue at its wait deadline, as any waiter', () => {
    const { engine, clock, fixed } = pausedEngine();
    const owner = new Owner();
    clock.advance(2_500);
    const c = fixed('free', owner, 30_000, 1_000);
    clock.advance(1_000);
    engine.advance();
    expect(c.state).toBe('ended');
    expect(owner.ended).toEqual([{ id: c.id, reason: 'wait-timeout' }]);
    expect(engine.lock('free')).toBeUndefined();
  });

  it("a reset (the node follows another) forgets the held locks: a later retry neither grants nor runs the mirror's deadlines", () => {
    const { engine, clock, fixed } = pausedEngine();
    fixed('x', new Owner(), 1_000);
    fixed('x', new Owner());
    clock.advance(2_500);
    engine.advance();
    expect(engine.heldGrantCount).toBe(1);
    engine.reset();
    expect(engine.heldGrantCount).toBe(0);
    // The mirror now holds a replicated claim whose lease has run out here: only the active may end it.
    engine.replicaGrant({
      lock: 'x',
      claimId: 99,
      token: 50n,
      protocol: 'keyed',
      client: 'k',
      leaseMs: 100,
      sliding: false,
      handoverMs: null,
      handoverCause: null,
      remainingMs: 100,
      heldForMs: 0,
    });
    clock.advance(500);
    engine.setGrantWindow(clock.now() + 800);
    engine.retryHeldGrants();
    expect(engine.lock('x')?.holder?.token).toBe(50n);
  });

  it('held handovers shut the gate for free locks too, and releasing them inside the window grants', () => {
    const { engine, clock, fixed } = engineFixture();
    engine.setGrantWindow(5_000);
    engine.holdHandovers();
    const c = fixed('free', new Owner());
    expect(c.state).toBe('waiting');
    clock.advance(100);
    engine.releaseHandovers();
    expect(c.state).toBe('holding');
  });
});

describe('the grant gate, as a property', () => {
  type Op =
    | { kind: 'acquire'; lock: number; lease: number; wait: number }
    | { kind: 'release'; lock: number }
    | { kind: 'force'; lock: number }
    | { kind: 'end'; lock: number }
    | { kind: 'time'; ms: number }
    | { kind: 'window'; ahead: number }
    | { kind: 'hold' }
    | { kind: 'unhold' }
    | { kind: 'retry' };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('acquire' as const), lock: fc.nat(3), lease: fc.integer({ min: 1, max: 3_000 }), wait: fc.integer({ min: 0, max: 3_000 }) }),
    fc.record({ kind: fc.constant('release' as const), lock: fc.nat(3) }),
    fc.record({ kind: fc.constant('force' as const), lock: fc.nat(3) }),
    fc.record({ kind: fc.constant('end' as const), lock: fc.nat(3) }),
    fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 2_000 }) }),
    fc.record({ kind: fc.constant('window' as const), ahead: fc.integer({ min: -500, max: 1_500 }) }),
    fc.constant({ kind: 'hold' as const }),
    fc.constant({ kind: 'unhold' as const }),
    fc.constant({ kind: 'retry' as const }),
  );

  it('no grant is ever made at or after the end of the grant window, nor while handovers are held', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const { engine, clock } = engineFixture();
        let window = 1_500;
        let held = false;
        engine.setGrantWindow(window);
        const bad: GrantEvent[] = [];
        engine.subscribe((e) => {
          if (e.type === 'grant' && (e.at >= window || held)) bad.push(e);
        });
        const owner = new Owner();
        for (const o of ops) {
          const name = `l${'lock' in o ? o.lock : 0}`;
          const holder = engine.lock(name)?.holder ?? null;
          switch (o.kind) {
            case 'acquire':
              engine.acquire({ name, owner, protocol: 'keyed', client: 'k', leaseMs: o.lease, waitMs: o.wait, sliding: false });
              break;
            case 'release':
              if (holder !== null) engine.release(name, holder.token);
              break;
            case 'force':
              engine.forceRelease(name);
              break;
            case 'end':
              if (holder !== null) engine.end(holder);
              break;
            case 'time':
              clock.advance(o.ms);
              if (o.ms % 2 === 0) engine.advance();
              break;
            case 'window':
              window = clock.now() + o.ahead;
              engine.setGrantWindow(window);
              break;
            case 'hold':
              held = true;
              engine.holdHandovers();
              break;
            case 'unhold':
              held = false;
              engine.releaseHandovers();
              break;
            case 'retry':
              engine.retryHeldGrants();
              break;
          }
        }
        expect(bad).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
