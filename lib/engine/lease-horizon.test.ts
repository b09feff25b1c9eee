// engine.latestLeaseEnd: the quiet period of the etcd mode's clean stop is read from it, so it must
// see every holder's real lease end: compact and object holders, sliding leases moved by renewals,
// and nothing of waiters or of holders that are gone. A property test holds it to a plain walk over
// every lock's holder (the reference) through random grants, releases, expiries and renewals.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Claim, LockState } from './claim.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

/** The reference: every lock's holder, through the engine's claim views. */
function walked(locks: Iterable<LockState>): number {
  let latest = Number.NEGATIVE_INFINITY;
  for (const lock of locks) if (lock.holder !== null && lock.holder.expiresAt > latest) latest = lock.holder.expiresAt;
  return latest;
}

describe('engine.latestLeaseEnd', () => {
  it('is -Infinity for a table with nobody holding', () => {
    const { engine, fixed, tick } = engineFixture();
    expect(engine.latestLeaseEnd()).toBe(Number.NEGATIVE_INFINITY);
    fixed('a', new Owner(), 100);
    tick(101);
    expect(engine.heldCount).toBe(0);
    expect(engine.latestLeaseEnd()).toBe(Number.NEGATIVE_INFINITY);
  });

  it('takes the latest end among keyed holders in both forms', () => {
    for (const compact of [true, false]) {
      const { clock, engine, fixed } = engineFixture({ compact });
      fixed('a', new Owner(), 5_000);
      clock.advance(1_000);
      fixed('b', new Owner(), 30_000);
      fixed('c', new Owner(), 2_000);
      expect(engine.latestLeaseEnd()).toBe(clock.now() + 30_000);
    }
  });

  it('follows a sliding lease that a touch moved on, and not a waiter behind a holder', () => {
    const { clock, engine, sliding, fixed } = engineFixture();
    const s = sliding('s', new Owner(), 4_000);
    // A waiter asking for a longer lease holds nothing yet.
    fixed('s', new Owner(), 60_000);
    clock.advance(3_000);
    engine.touch(s);
    expect(engine.latestLeaseEnd()).toBe(clock.now() + 4_000);
  });

  it('drops a holder once it released', () => {
    const { clock, engine, fixed } = engineFixture();
    fixed('short', new Owner(), 1_000);
    const long = fixed('long', new Owner(), 50_000);
    expect(engine.release('long', long.token)).toBe('ok');
    expect(engine.latestLeaseEnd()).toBe(clock.now() + 1_000);
  });

  it('equals a walk over every holder through random grants, releases, expiries and renewals', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('fixed' as const), lock: fc.integer({ min: 0, max: 30 }), lease: fc.constantFrom(500, 1_000, 7_000, 30_000) }),
      fc.record({ kind: fc.constant('sliding' as const), lock: fc.integer({ min: 0, max: 30 }), lease: fc.constantFrom(800, 5_000) }),
      fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('touch' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 3_000 }) }),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { maxLength: 120 }), (compact, ops) => {
        const { engine, fixed, sliding, tick } = engineFixture({ compact });
        const claims: Claim[] = [];
        for (const o of ops) {
          if (o.kind === 'fixed') claims.push(fixed(`l${o.lock}`, new Owner(), o.lease));
          else if (o.kind === 'sliding') claims.push(sliding(`l${o.lock}`, new Owner(), o.lease));
          else if (o.kind === 'tick') tick(o.ms);
          else {
            const c = claims[o.pick % Math.max(1, claims.length)];
            if (c === undefined || c.state !== 'holding') continue;
            if (o.kind === 'touch' && c.sliding) engine.touch(c);
            else if (o.kind === 'release' && !c.sliding) engine.release(c.name, c.token);
          }
          expect(engine.latestLeaseEnd()).toBe(walked(engine.allLocks()));
        }
      }),
      { numRuns: 200 },
    );
  });
});
