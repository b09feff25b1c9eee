// Resumable claims between connections are bounded (issue 26, item 6): one waits for its client
// at most the detach limit's maxMs whatever its lease, and at most maxClaims wait at once; past
// that a claim that loses its connection is not kept. Also at a promotion. Fake clock.
import { describe, expect, it } from 'vitest';
import { BETWEEN_CONNECTIONS, CarriedClaims } from './carried-claims.ts';
import type { Claim } from './claim.ts';
import { DEFAULT_DETACH_LIMITS } from './lock-engine.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

/** The probe's lease: 999,999,999,999,999 ms, about 31,700 years. */
const HUGE = 999_999_999_999_999;

function hashOf(i: number): string {
  return i.toString(16).padStart(64, '0');
}

function setup(maxMs = 5_000, maxClaims = 3) {
  const f = engineFixture();
  f.engine.limitDetached({ maxMs, maxClaims });
  /** A resumable session claim, as a connection's ACQUIRE with a claim key makes it. */
  const resumable = (name: string, i: number, owner = new Owner(), leaseMs = HUGE) =>
    f.engine.acquire({ name, owner, protocol: 'session', client: 's', leaseMs, waitMs: 0, sliding: true, keyHash: hashOf(i) });
  /** Its connection was reset: kept between connections, or ended as a close ends it. */
  const reset = (claim: Claim): boolean => {
    const kept = f.engine.detach(claim, BETWEEN_CONNECTIONS);
    if (!kept) f.engine.end(claim);
    return kept;
  };
  return { ...f, resumable, reset };
}

describe('limits on claims between connections', () => {
  it('serves by default at most 60 s and 16,384 claims, as `baton serve` documents', () => {
    expect(engineFixture().engine.detachLimit).toEqual({ maxMs: 60_000, maxClaims: 16_384 });
    expect(DEFAULT_DETACH_LIMITS).toEqual({ maxMs: 60_000, maxClaims: 16_384 });
  });

  it('a reset holder with a lease of centuries waits for its client only maxMs, then the next waiter holds', () => {
    const { engine, tick, resumable, reset } = setup();
    const held = resumable('p', 1);
    const next = new Owner();
    engine.acquire({ name: 'p', owner: next, protocol: 'session', client: 'n', leaseMs: 10_000, waitMs: 0, sliding: true });
    expect(reset(held)).toBe(true);
    tick(4_999);
    expect(engine.lock('p')?.holder).toBe(held);
    // The waiter's own lease is kept alive by its connection; the parked one has nobody.
    engine.touch(engine.lock('p')?.head as Claim);
    tick(1);
    expect(held.state).toBe('ended');
    expect(next.granted.map((c) => c.name)).toEqual(['p']);
    expect([engine.detachedCount, engine.resumableCount]).toEqual([0, 0]);
  });

  it('a reset claim whose lease ends before maxMs ends at its lease, as before', () => {
    const { engine, tick, resumable, reset } = setup(5_000);
    const held = resumable('q', 1, new Owner(), 1_000);
    reset(held);
    tick(999);
    expect(held.state).toBe('holding');
    tick(1);
    expect(held.state).toBe('ended');
    expect(engine.heldCount).toBe(0);
  });

  it('a reset waiter also waits only maxMs for its client, and leaves the queue then', () => {
    const { engine, tick, resumable, reset } = setup();
    const holder = new Owner();
    engine.acquire({ name: 'w', owner: holder, protocol: 'session', client: 'h', leaseMs: HUGE, waitMs: 0, sliding: true });
    const waiter = resumable('w', 2);
    expect(reset(waiter)).toBe(true);
    tick(5_000);
    expect([waiter.state, engine.lock('w')?.waiting, engine.detachedCount]).toEqual(['ended', 0, 0]);
  });

  it('past maxClaims a reset claim is not kept: it ends at once as a close does and its lock goes to the next waiter', () => {
    const { engine, resumable, reset } = setup(5_000, 3);
    const kept = [1, 2, 3].map((i) => resumable(`k${i}`, i));
    for (const c of kept) expect(reset(c)).toBe(true);
    const fourth = resumable('k4', 4);
    const next = new Owner();
    engine.acquire({ name: 'k4', owner: next, protocol: 'session', client: 'n', leaseMs: 10_000, waitMs: 0, sliding: true });
    expect(reset(fourth)).toBe(false);
    expect([fourth.state, next.granted.length]).toEqual(['ended', 1]);
    expect([engine.detachedCount, engine.detachRefusedCount, engine.heldCount]).toEqual([3, 1, 4]);
    expect(engine.resume('k4', hashOf(4), new Owner())).toBeNull();
    // The ones kept are still there for their clients.
    expect(engine.resume('k1', hashOf(1), new Owner())?.id).toBe(kept[0]?.id);
  });

  it('a RESUME frees a place and restarts the full lease; a second reset gets maxMs again', () => {
    const { engine, clock, tick, resumable, reset } = setup(5_000, 1);
    const claim = resumable('r', 1);
    reset(claim);
    tick(4_000);
    const conn = new Owner();
    expect(engine.resume('r', hashOf(1), conn)).toBe(claim);
    expect([engine.detachedCount, claim.expiresAt]).toEqual([0, clock.now() + HUGE]);
    // The place is free for another claim's reset.
    expect(reset(resumable('s', 2))).toBe(true);
    expect(engine.detachedCount).toBe(1);
    // That one ends at its maxMs; the resumed claim, on its connection again, holds on.
    tick(100_000);
    expect([claim.state, engine.detachedCount]).toEqual(['holding', 0]);
    expect(reset(claim)).toBe(true);
    tick(4_999);
    expect(claim.state).toBe('holding');
    tick(1);
    expect(claim.state).toBe('ended');
  });

  it('counts a parked waiter that reaches the lock once, and uncounts it when it is force-released or kicked', () => {
    const { engine, resumable, reset } = setup(5_000, 10);
    const first = new Owner();
    const h = engine.acquire({ name: 'c', owner: first, protocol: 'session', client: 'h', leaseMs: HUGE, waitMs: 0, sliding: true });
    const w1 = resumable('c', 1);
    const w2 = resumable('c', 2);
    reset(w1);
    reset(w2);
    expect(engine.detachedCount).toBe(2);
    engine.end(h);
    expect([w1.state, engine.detachedCount]).toEqual(['holding', 2]);
    expect(engine.forceRelease('c').ok).toBe(true);
    expect([w2.state, engine.detachedCount]).toEqual(['holding', 1]);
    const w3 = resumable('c', 3);
    reset(w3);
    expect(engine.kick('c', w3.id)).toBe(true);
    expect(engine.detachedCount).toBe(1);
    engine.reset();
    expect(engine.detachedCount).toBe(0);
  });

  it('hands the shortened lease to replication with the next renewals, so a standby keeps no more of it', () => {
    const { engine, clock, resumable, reset } = setup(5_000);
    const claim = resumable('rep', 1);
    engine.trackRenewals(true);
    engine.takeRenewals();
    reset(claim);
    expect(engine.takeRenewals().map((c) => [c.id, c.expiresAt])).toEqual([[claim.id, clock.now() + 5_000]]);
  });

  it('refuses limits that are not a positive finite time and a whole count', () => {
    const { engine } = engineFixture();
    expect(() => engine.limitDetached({ maxMs: 0, maxClaims: 1 })).toThrow(RangeError);
    expect(() => engine.limitDetached({ maxMs: Number.POSITIVE_INFINITY, maxClaims: 1 })).toThrow(RangeError);
    expect(() => engine.limitDetached({ maxMs: 1_000, maxClaims: 1.5 })).toThrow(RangeError);
  });
});

describe('limits at a promotion', () => {
  /** A standby that mirrored five resumable holders with leases of centuries. */
  function standby(maxMs: number, maxClaims: number) {
    const f = engineFixture({ startCeiling: 100n });
    f.engine.limitDetached({ maxMs, maxClaims });
    for (let i = 1; i <= 5; i++) {
      f.engine.replicaGrant({
        lock: `m${i}`,
        claimId: i,
        token: BigInt(i),
        protocol: 'session',
        client: 'c',
        leaseMs: HUGE,
        sliding: true,
        remainingMs: HUGE,
        heldForMs: 0,
        handoverMs: null,
        handoverCause: null,
        keyHash: hashOf(i),
      });
    }
    return f;
  }

  it('keeps at most maxClaims (the oldest), each for at most maxMs: a failover does not get round the limits', () => {
    const { engine, tick } = standby(2_000, 3);
    const carried = new CarriedClaims();
    carried.carried = engine.keepDetached(carried);
    expect([carried.carried, engine.detachedCount, engine.detachRefusedCount]).toEqual([3, 3, 2]);
    const owners = [1, 2, 3, 4, 5].map((i) => engine.lock(`m${i}`)?.holder?.owner === carried);
    expect(owners).toEqual([true, true, true, false, false]);
    tick(1_999);
    expect(engine.heldCount).toBe(5);
    tick(1);
    expect([1, 2, 3].map((i) => engine.lock(`m${i}`)?.holder ?? null)).toEqual([null, null, null]);
    expect([carried.expired, engine.detachedCount]).toEqual([3, 0]);
  });
});
