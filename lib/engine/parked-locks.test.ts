// Idle locks stay in the engine's table, parked, for their next claim (lock-table.ts): what a
// reader sees must be exactly what it saw when an idle lock was dropped at once.
import { describe, expect, it } from 'vitest';
import type { LockEvent } from './events.ts';
import { MAX_PARKED } from './lock-table.ts';
import { engineFixture as fixture, Owner } from './testing/engine-fixture.ts';

// Both forms of a lock park alike: a keyed holder's row (compact-holders.ts) and a LockState.
describe.each([
  ['compact', true],
  ['object', false],
] as const)('parked idle locks (%s form)', (_form, compact) => {
  const engineFixture = (): ReturnType<typeof fixture> => fixture({ compact });

  it('are not seen by readers: no lock, no count, not listed', () => {
    const { engine, fixed } = engineFixture();
    const claim = fixed('a', new Owner());
    expect(engine.release('a', claim.token)).toBe('ok');
    expect(engine.lock('a')).toBeUndefined();
    expect(engine.lockCount).toBe(0);
    expect([...engine.allLocks()]).toEqual([]);
    expect(engine.parkedLockCount).toBe(1);
    // A release, resume or force-release on it finds nothing held, as on a lock never seen.
    expect(engine.release('a', claim.token)).toBe('stale');
    expect(engine.forceRelease('a')).toEqual({ ok: false, reason: 'not-held', holderToken: null });
    expect(engine.kick('a', claim.id)).toBe(false);
  });

  it('are taken up again by the next claim of their name, which starts as on a new lock', () => {
    const { engine, fixed, clock } = engineFixture();
    const events: LockEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const first = fixed('a', new Owner());
    const lockState = first.lock;
    clock.advance(5);
    engine.release('a', first.token);
    expect(engine.parkedLockCount).toBe(1);
    clock.advance(5);
    const second = fixed('a', new Owner());
    if (!compact) expect(second.lock).toBe(lockState);
    expect(second.state).toBe('holding');
    expect(engine.lock('a')?.holder?.id).toBe(second.id);
    expect(engine.lockCount).toBe(1);
    expect(engine.parkedLockCount).toBe(0);
    // No handover from the last holder: the lock was free, as a new lock would be.
    const grants = events.filter((e) => e.type === 'grant');
    expect(grants.map((g) => [g.handoverMs, g.handoverCause])).toEqual([
      [null, null],
      [null, null],
    ]);
    // The same string object names the lock each time (the grant log keys on it).
    expect(events.filter((e) => e.type === 'grant' || e.type === 'release').every((e) => e.lock === lockState.name)).toBe(true);
  });

  it(`keep at most ${MAX_PARKED}, pushing out the one parked longest ago`, () => {
    const { engine, fixed } = engineFixture();
    const states = [];
    for (let i = 0; i < MAX_PARKED + 10; i++) {
      const c = fixed(`k${i}`, new Owner());
      states.push(c.lock);
      engine.release(`k${i}`, c.token);
    }
    expect(engine.parkedLockCount).toBe(MAX_PARKED);
    expect(engine.lockCount).toBe(0);
    // k0 was pushed out: its next claim makes a new lock (no parked one is taken); the newest
    // parked one is taken up again.
    const k0 = fixed('k0', new Owner());
    expect(engine.parkedLockCount).toBe(MAX_PARKED);
    if (!compact) expect(k0.lock).not.toBe(states[0]);
    const last = MAX_PARKED + 9;
    const kLast = fixed(`k${last}`, new Owner());
    expect(engine.parkedLockCount).toBe(MAX_PARKED - 1);
    if (!compact) expect(kLast.lock).toBe(states[last]);
    expect(engine.lockCount).toBe(2);
  });

  it('are forgotten by a reset, and a later claim of the name makes a new lock', () => {
    const { engine, fixed } = engineFixture();
    const c = fixed('a', new Owner());
    engine.release('a', c.token);
    engine.reset();
    expect(engine.parkedLockCount).toBe(0);
    const again = fixed('a', new Owner());
    if (!compact) expect(again.lock).not.toBe(c.lock);
    expect(engine.parkedLockCount).toBe(0);
    expect(again.state).toBe('holding');
    expect(engine.lockCount).toBe(1);
  });

  it('a parked lock cleared by a snapshot part leaves no trace', () => {
    const { engine, fixed } = engineFixture();
    const c = fixed('a', new Owner());
    engine.release('a', c.token);
    engine.replicaClearLock('a');
    expect(engine.parkedLockCount).toBe(0);
    expect(engine.lockCount).toBe(0);
    const again = fixed('a', new Owner());
    if (!compact) expect(again.lock).not.toBe(c.lock);
    expect(engine.parkedLockCount).toBe(0);
    expect(engine.lockCount).toBe(1);
  });
});
