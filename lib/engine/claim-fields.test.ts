// A claim's and a lock's fields that live apart from them or are worked out (claim.ts,
// claim-parts.ts, lock-queue.ts: issue 29) read as the fields they replaced: the times of a claim
// granted at once, of one granted from the queue, of a replicated one; the last end a handover is
// counted from when the queue that kept it was emptied and made again; and an ended claim keeps
// what it had.
import { describe, expect, it } from 'vitest';
import type { GrantEvent, LockEvent } from './events.ts';
import { DETACHED_OWNER } from './lock-engine.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

const grants = (events: LockEvent[]) => events.filter((e): e is GrantEvent => e.type === 'grant');

describe('claim fields kept apart', () => {
  it('a claim granted at once: asked and granted at the same time, lease end at grant + lease', () => {
    const { fixed, clock } = engineFixture();
    clock.advance(0.25);
    const c = fixed('a', new Owner(), 7_000);
    expect([c.state, c.protocol, c.sliding, c.tag, c.keyHash, c.clientName]).toEqual(['holding', 'keyed', false, 0, null, null]);
    expect([c.enqueuedAt, c.grantedAt, c.expiresAt, c.waitDeadline, c.next]).toEqual([1_000.25, 1_000.25, 8_000.25, Number.POSITIVE_INFINITY, null]);
    expect(c.links).toBeNull();
  });

  it('a waiter keeps when it asked and its wait deadline, and gets its grant time and lease end when granted', () => {
    const { engine, fixed, clock } = engineFixture();
    const events: LockEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const h = fixed('a', new Owner());
    clock.advance(10);
    const w = fixed('a', new Owner(), 5_000, 60_000);
    expect([w.state, w.enqueuedAt, w.grantedAt, w.waitDeadline, w.expiresAt]).toEqual(['waiting', 1_010, 0, 61_010, Number.POSITIVE_INFINITY]);
    expect(engine.lock('a')?.positionOf(w)).toBe(1);
    clock.advance(30);
    engine.release('a', h.token);
    expect([w.state, w.enqueuedAt, w.grantedAt, w.expiresAt]).toEqual(['holding', 1_010, 1_040, 6_040]);
    expect(grants(events).at(-1)).toMatchObject({ claimId: w.id, waitedMs: 30, handoverMs: 0, handoverCause: 'release' });
    clock.advance(5);
    engine.release('a', w.token);
    expect(events.at(-1)).toMatchObject({ type: 'release', claimId: w.id, grantedAt: 1_040, waitedMs: 30 });
  });

  it('a handover counts from the last end even after the queue that kept it was emptied and made again', () => {
    const { engine, fixed, clock } = engineFixture();
    const events: LockEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const h = fixed('a', new Owner());
    const w1 = fixed('a', new Owner());
    clock.advance(100);
    engine.release('a', h.token); // w1 holds; its queue is gone
    expect(engine.lock('a')?.waiting).toBe(0);
    clock.advance(100);
    const w2 = fixed('a', new Owner()); // a new queue
    clock.advance(50);
    engine.end(w1); // ends at 1,250
    clock.advance(0); // granted at once: handover 0 ms from w1's end, not from h's
    expect(w2.state).toBe('holding');
    expect(grants(events).map((g) => [g.claimId, g.handoverMs, g.handoverCause])).toEqual([
      [h.id, null, null],
      [w1.id, 0, 'release'],
      [w2.id, 0, 'disconnect'],
    ]);
  });

  it('a replicated holder keeps the grant time and lease end the stream gave, and renewals move the end', () => {
    const { engine, clock } = engineFixture();
    clock.advance(0.5);
    const base = { lock: 'r', token: 7n, protocol: 'keyed' as const, client: 'c', leaseMs: 10_000, sliding: false, handoverMs: null, handoverCause: null };
    engine.replicaGrant({ ...base, claimId: 3, remainingMs: 4_000, heldForMs: 6_000 });
    const c = engine.lock('r')?.holder;
    expect([c?.grantedAt, c?.enqueuedAt, c?.expiresAt, c?.token, c?.owner]).toEqual([-4_999.5, -4_999.5, 5_000.5, 7n, DETACHED_OWNER]);
    clock.advance(1_000);
    engine.replicaRenew('r', 3, 2_000);
    // Read again: a keyed holder alone is a row (compact-holders.ts), each read a new view.
    expect(engine.lock('r')?.holder?.expiresAt).toBe(4_000.5);
    // A renewal to exactly grant + lease reads as that too.
    engine.replicaRenew('r', 3, 10_000 - 6_000 - 1_000);
    expect(engine.lock('r')?.holder?.expiresAt).toBe(5_000.5);
  });

  it('a sliding claim moves its lease end on every touch; its rare fields read back', () => {
    const { engine, clock } = engineFixture();
    const c = engine.acquire({
      name: 's',
      owner: new Owner(),
      protocol: 'session',
      client: 's',
      clientName: 'w-1',
      leaseMs: 1_000,
      waitMs: 0,
      sliding: true,
      tag: 42,
      keyHash: 'ab',
    });
    expect([c.protocol, c.sliding, c.tag, c.keyHash, c.clientName, c.expiresAt]).toEqual(['session', true, 42, 'ab', 'w-1', 2_000]);
    clock.advance(400);
    engine.touch(c);
    expect(c.expiresAt).toBe(2_400);
    expect(engine.resumableClaim(c.id)).toBe(c);
  });

  it('an ended claim keeps what it had', () => {
    const { engine, fixed, clock } = engineFixture();
    const c = fixed('a', new Owner(), 3_000);
    const before = [c.id, c.token, c.enqueuedAt, c.grantedAt, c.expiresAt, c.name];
    clock.advance(10);
    engine.release('a', c.token);
    fixed('a', new Owner(), 9_000); // the same lock, a new claim
    expect(c.state).toBe('ended');
    expect([c.id, c.token, c.enqueuedAt, c.grantedAt, c.expiresAt, c.name]).toEqual(before);
  });
});
