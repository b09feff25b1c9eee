// Resumable session claims between connections: kept by a promotion (keepDetached), taken up
// again by RESUME (engine.resume) or ended at their lease like a silent session. Fake clock.
import { describe, expect, it } from 'vitest';
import { CarriedClaims } from './carried-claims.ts';
import type { ReplicaGrant, ReplicaWaiter } from './lock-engine.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const HASH_C = 'c'.repeat(64);

function grant(over: Partial<ReplicaGrant> = {}): ReplicaGrant {
  return {
    lock: 'x',
    claimId: 10,
    token: 100n,
    protocol: 'session',
    client: '10.0.0.1:1',
    leaseMs: 2_000,
    sliding: true,
    remainingMs: 2_000,
    heldForMs: 0,
    handoverMs: null,
    handoverCause: null,
    keyHash: HASH_A,
    ...over,
  };
}

function waiter(over: Partial<ReplicaWaiter> = {}): ReplicaWaiter {
  return {
    lock: 'x',
    claimId: 11,
    protocol: 'session',
    client: '10.0.0.1:2',
    leaseMs: 2_000,
    sliding: true,
    waitingForMs: 0,
    waitRemainingMs: null,
    keyHash: HASH_B,
    ...over,
  };
}

/** A standby that mirrored a resumable holder and waiter, then promoted (keepDetached). */
function promoted() {
  const f = engineFixture({ startCeiling: 200n });
  f.engine.replicaGrant(grant());
  f.engine.replicaEnqueue(waiter());
  const carried = new CarriedClaims();
  carried.carried = f.engine.keepDetached(carried);
  return { ...f, carried };
}

describe('detached resumable claims', () => {
  it('a promotion hands a lock the old active left free with a queue (released during its handoff) to the kept waiter at its head', () => {
    const { engine } = engineFixture({ startCeiling: 200n });
    engine.replicaGrant(grant({ keyHash: null }));
    engine.replicaEnqueue(waiter());
    // The old active was handing off (handovers held): the release replicated, no grant after it.
    engine.replicaEndHolder('x', 10, 'release');
    engine.holdHandovers();
    const carried = new CarriedClaims();
    carried.carried = engine.keepDetached(carried);
    expect(engine.fileFreeQueues()).toBe(1);
    engine.releaseHandovers();
    expect([engine.lock('x')?.holder?.id, engine.lock('x')?.holder?.owner]).toEqual([11, carried]);
    // A request that comes later queues behind it, and is granted when it ends.
    const late = new Owner();
    const claim = engine.acquire({ name: 'x', owner: late, protocol: 'session', client: 'c', leaseMs: 2_000, waitMs: 0, sliding: true });
    expect(claim.state).toBe('waiting');
  });

  it('a promotion keeps replicated resumable holders and waiters, owned by the carrier', () => {
    const { engine, carried } = promoted();
    expect(carried.carried).toBe(2);
    expect(engine.lock('x')?.holder?.owner).toBe(carried);
    expect(
      engine
        .lock('x')
        ?.queue()
        .map((c) => [c.id, c.owner === carried]),
    ).toEqual([[11, true]]);
  });

  it('RESUME with the right key takes the holder up with the same token and restarts its lease', () => {
    const { engine, clock, carried } = promoted();
    clock.advance(1_500);
    const conn = new Owner();
    const claim = engine.resume('x', HASH_A, conn);
    expect([claim?.id, claim?.token, claim?.state, claim?.owner]).toEqual([10, 100n, 'holding', conn]);
    expect(claim?.expiresAt).toBe(clock.now() + 2_000);
    expect(carried.resumed).toBe(1);
  });

  it('a wrong key, another lock or a claim still owned by a connection are unknown, and nothing changes', () => {
    const { engine, tick, sliding } = promoted();
    expect(engine.resume('x', HASH_C, new Owner())).toBeNull();
    expect(engine.resume('y', HASH_A, new Owner())).toBeNull();
    const live = sliding('z', new Owner(), 2_000);
    expect(engine.resume('z', HASH_C, new Owner())).toBeNull();
    expect(live.state).toBe('holding');
    // The real claim is untouched by the failed tries: it still ends at its own lease.
    tick(1_999);
    expect(engine.lock('x')?.holder?.id).toBe(10);
  });

  it('a holder nobody resumes expires at its lease from the last renewal, and the waiter behind it gets the lock', () => {
    const { engine, tick, carried } = promoted();
    engine.replicaRenew('x', 10, 500); // the last renewal this node saw
    tick(499);
    expect(engine.lock('x')?.holder?.id).toBe(10);
    tick(1);
    const holder = engine.lock('x')?.holder;
    expect([holder?.id, (holder?.token ?? 0n) > 100n]).toEqual([11, true]);
    expect(carried.expired).toBe(1);
    // The waiter held while between connections: its client learns it on RESUME.
    const conn = new Owner();
    expect(engine.resume('x', HASH_B, conn)?.state).toBe('holding');
  });

  it('a lapsed claim cannot be resumed, even before the timer got round to it', () => {
    const { engine, clock } = promoted();
    clock.advance(1_000);
    const waiterConn = new Owner();
    expect(engine.resume('x', HASH_B, waiterConn)?.state).toBe('waiting');
    clock.advance(1_000); // the holder's lease is over; no advance() has run
    expect(engine.resume('x', HASH_A, new Owner())).toBeNull();
    expect(engine.lock('x')?.holder?.id).toBe(11);
    expect(waiterConn.granted.map((c) => c.id)).toEqual([11]);
  });

  it('a waiter keeps its place: new waiters queue behind it, and it leaves the queue at its lease end if nobody comes', () => {
    const { engine, sliding, tick, carried } = promoted();
    const late = new Owner();
    const behind = sliding('x', late, 10_000);
    expect(engine.lock('x')?.positionOf(behind)).toBe(2);
    engine.resume('x', HASH_A, new Owner()); // the holder's client is back and heartbeats
    tick(1_000);
    engine.touch(engine.lock('x')?.holder ?? behind);
    tick(1_000); // the waiter's lease (2 s from the promotion) is over
    expect(
      engine
        .lock('x')
        ?.queue()
        .map((c) => c.id),
    ).toEqual([behind.id]);
    expect(carried.expired).toBe(1);
  });

  it('a standby renews waiters too, from the coalesced renewals', () => {
    const f = engineFixture();
    f.engine.replicaEnqueue(waiter({ leaseMs: 5_000 }));
    f.engine.replicaRenew('x', 11, 300);
    expect(f.engine.resumableClaim(11)?.expiresAt).toBe(1_300);
    f.engine.replicaRenew('x', 99, 300); // unknown: nothing
    f.engine.replicaRenew('y', 11, 900); // not on that lock: nothing
    expect(f.engine.resumableClaim(11)?.expiresAt).toBe(1_300);
  });

  it('collects renewals of resumable claims once per batch, only while tracked, and never of other claims', () => {
    const { engine } = engineFixture();
    const plain = engine.acquire({ name: 'p', owner: new Owner(), protocol: 'session', client: 's', leaseMs: 1_000, waitMs: 0, sliding: true });
    const resumable = engine.acquire({
      name: 'r',
      owner: new Owner(),
      protocol: 'session',
      client: 's',
      leaseMs: 1_000,
      waitMs: 0,
      sliding: true,
      keyHash: HASH_A,
    });
    engine.touch(resumable);
    expect(engine.takeRenewals()).toEqual([]); // not tracked: no list kept
    engine.trackRenewals(true);
    engine.touch(plain);
    engine.touch(resumable);
    engine.touch(resumable);
    expect(engine.takeRenewals()).toEqual([resumable]);
    expect(engine.takeRenewals()).toEqual([]);
    engine.touch(resumable);
    engine.trackRenewals(false);
    expect(engine.takeRenewals()).toEqual([]);
  });

  it('forgets a resumable claim once it ends', () => {
    const { engine } = engineFixture();
    const c = engine.acquire({ name: 'r', owner: new Owner(), protocol: 'session', client: 's', leaseMs: 1_000, waitMs: 0, sliding: true, keyHash: HASH_A });
    expect(engine.resumableCount).toBe(1);
    engine.end(c);
    expect([engine.resumableCount, engine.resumableClaim(c.id)]).toEqual([0, undefined]);
  });
});

describe('a resumable waiter granted from the queue', () => {
  it('stays resumable: its grant can be replicated with its key hash and resumed after a promotion', () => {
    const f = engineFixture({ startCeiling: 200n });
    const first = f.engine.acquire({
      name: 'q',
      owner: new Owner(),
      protocol: 'session',
      client: 'c1',
      leaseMs: 2_000,
      waitMs: 0,
      sliding: true,
      keyHash: HASH_A,
    });
    const second = f.engine.acquire({
      name: 'q',
      owner: new Owner(),
      protocol: 'session',
      client: 'c2',
      leaseMs: 2_000,
      waitMs: 0,
      sliding: true,
      keyHash: HASH_B,
    });
    expect(second.state).toBe('waiting');
    expect(f.engine.resumableClaim(second.id)?.keyHash).toBe(HASH_B);
    f.engine.end(first);
    expect(second.state).toBe('holding');
    // What replication reads when it encodes the grant event.
    expect(f.engine.resumableClaim(second.id)?.keyHash).toBe(HASH_B);
    expect([...f.engine.resumableClaims()].map((c) => c.id)).toEqual([second.id]);
  });
});
