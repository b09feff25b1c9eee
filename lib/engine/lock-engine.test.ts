import { describe, expect, it } from 'vitest';
import type { Claim } from './claim.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

describe('queueing and handover', () => {
  it('grants a free lock at once, before acquire returns', () => {
    const { engine, fixed } = engineFixture();
    const owner = new Owner();
    const claim = fixed('a', owner);
    expect(claim.state).toBe('holding');
    expect(owner.granted).toEqual([claim]);
    expect(claim.token).toBe(1n);
    // A keyed holder with nobody waiting is a row (compact-holders.ts): read as a new view each time.
    expect(engine.lock('a')?.holder?.id).toBe(claim.id);
  });

  it('queues later requesters at the tail and grants them in FIFO order', () => {
    const { engine, fixed } = engineFixture();
    const first = fixed('a', new Owner());
    const waiters = [fixed('a', new Owner()), fixed('a', new Owner()), fixed('a', new Owner())];
    expect(waiters.map((w) => w.state)).toEqual(['waiting', 'waiting', 'waiting']);
    expect(engine.lock('a')?.queue()).toEqual(waiters);
    const order: number[] = [];
    let holder = first;
    for (let i = 0; i < waiters.length; i++) {
      expect(engine.release('a', holder.token)).toBe('ok');
      holder = engine.lock('a')?.holder as Claim;
      order.push(holder.id);
    }
    expect(order).toEqual(waiters.map((w) => w.id));
  });

  it('hands the lock to the head of the queue inside the release call, with a larger token', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    const nextOwner = new Owner();
    const next = fixed('a', nextOwner);
    expect(nextOwner.granted).toEqual([]);
    engine.release('a', holder.token);
    expect(nextOwner.granted).toEqual([next]);
    expect(next.state).toBe('holding');
    expect(next.token).toBeGreaterThan(holder.token);
    expect(holder.state).toBe('ended');
  });

  it('refuses a release with a stale token and changes nothing', () => {
    const { engine, fixed } = engineFixture();
    const first = fixed('a', new Owner());
    const second = fixed('a', new Owner());
    engine.release('a', first.token);
    expect(engine.release('a', first.token)).toBe('stale');
    expect(engine.release('nope', 1n)).toBe('stale');
    expect(engine.lock('a')?.holder).toBe(second);
    expect(second.state).toBe('holding');
    expect(engine.heldCount).toBe(1);
  });

  it('issues one strictly increasing token sequence across all locks', () => {
    const { fixed } = engineFixture();
    const tokens = ['a', 'b', 'c', 'a2', 'b2'].map((name) => fixed(name, new Owner()).token);
    expect(tokens).toEqual([1n, 2n, 3n, 4n, 5n]);
  });

  it('keeps tokens above 2^53 exact', () => {
    const start = 2n ** 53n + 5n;
    const { engine, fixed } = engineFixture({ startCeiling: start });
    const a = fixed('a', new Owner());
    const b = fixed('b', new Owner());
    expect(a.token).toBe(2n ** 53n + 6n);
    expect(b.token).toBe(2n ** 53n + 7n);
    expect(String(a.token)).toBe('9007199254740998');
    expect(String(b.token)).toBe('9007199254740999');
    expect(engine.tokenHighWater).toBe(9007199254740999n);
  });
});

describe('leases', () => {
  it('reclaims a fixed lease exactly leaseMs after the grant and hands the lock on', () => {
    const { engine, fixed, tick } = engineFixture();
    const owner = new Owner();
    const holder = fixed('a', owner, 500);
    const next = fixed('a', new Owner());
    tick(499);
    expect(holder.state).toBe('holding');
    tick(1);
    expect(holder.state).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'expired' }]);
    expect(engine.lock('a')?.holder).toBe(next);
  });

  it('does not extend a fixed lease on touch', () => {
    const { fixed, tick, engine } = engineFixture();
    const holder = fixed('a', new Owner(), 500);
    tick(400);
    engine.touch(holder);
    tick(100);
    expect(holder.state).toBe('ended');
  });

  it('restarts a sliding lease from each touch', () => {
    const { sliding, tick, engine } = engineFixture();
    const holder = sliding('a', new Owner(), 500);
    tick(400);
    engine.touch(holder);
    tick(400);
    expect(holder.state).toBe('holding');
    engine.touch(holder);
    tick(499);
    expect(holder.state).toBe('holding');
    tick(1);
    expect(holder.state).toBe('ended');
  });

  it('reclaims a sliding lease after a full lease of silence and tells the owner it expired', () => {
    const { sliding, tick } = engineFixture();
    const owner = new Owner();
    const holder = sliding('a', owner, 500);
    tick(500);
    expect(holder.state).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'expired' }]);
  });

  it('does not revive a sliding lease that lapsed before the touch arrived', () => {
    const { sliding, tick, clock, engine } = engineFixture();
    const holder = sliding('a', new Owner(), 500);
    clock.advance(600); // the lease lapsed at +500; the timer has not run yet
    engine.touch(holder);
    tick(0);
    expect(holder.state).toBe('ended');
  });

  it('removes a sliding waiter that stays silent a full lease, with reason expired', () => {
    const { engine, fixed, sliding, tick } = engineFixture();
    const holder = fixed('a', new Owner(), 10_000);
    const owner = new Owner();
    const waiter = sliding('a', owner, 500);
    tick(500);
    expect(waiter.state).toBe('ended');
    expect(owner.ended).toEqual([{ id: waiter.id, reason: 'expired' }]);
    engine.release('a', holder.token);
    expect(owner.granted).toEqual([]);
  });

  it('keeps a sliding waiter that is touched in the queue', () => {
    const { engine, fixed, sliding, tick } = engineFixture();
    const holder = fixed('a', new Owner(), 10_000);
    const waiter = sliding('a', new Owner(), 500);
    for (let i = 0; i < 5; i++) {
      tick(400);
      engine.touch(waiter);
    }
    expect(waiter.state).toBe('waiting');
    engine.release('a', holder.token);
    expect(waiter.state).toBe('holding');
  });
});

describe('waiting', () => {
  it('removes a waiter at its wait deadline with wait-timeout and never grants it', () => {
    const { engine, fixed, tick } = engineFixture();
    const holder = fixed('a', new Owner());
    const owner = new Owner();
    const waiter = fixed('a', owner, 10_000, 300);
    tick(299);
    expect(waiter.state).toBe('waiting');
    tick(1);
    expect(owner.ended).toEqual([{ id: waiter.id, reason: 'wait-timeout' }]);
    engine.release('a', holder.token);
    expect(owner.granted).toEqual([]);
    expect(engine.lockCount).toBe(0);
  });

  it('waits forever when waitMs is 0', () => {
    const { engine, fixed, tick } = engineFixture();
    const holder = fixed('a', new Owner(), 1e12);
    const waiter = fixed('a', new Owner(), 1_000, 0);
    tick(1e9);
    expect(waiter.state).toBe('waiting');
    engine.release('a', holder.token);
    expect(waiter.state).toBe('holding');
  });

  it('never grants a waiter that disconnected', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    const goneOwner = new Owner();
    const gone = fixed('a', goneOwner);
    const stays = fixed('a', new Owner());
    engine.end(gone);
    engine.release('a', holder.token);
    expect(goneOwner.granted).toEqual([]);
    expect(goneOwner.ended).toEqual([]); // the owner asked; it is not told
    expect(engine.lock('a')?.holder).toBe(stays);
  });

  it('never grants a waiter whose wait deadline passed before a release the timer had not caught up with', () => {
    const { engine, fixed, clock } = engineFixture();
    const holder = fixed('a', new Owner());
    const lateOwner = new Owner();
    const late = fixed('a', lateOwner, 10_000, 50);
    const next = fixed('a', new Owner());
    clock.advance(60); // deadline passed at +50; advance() has not run
    engine.release('a', holder.token);
    expect(lateOwner.granted).toEqual([]);
    expect(lateOwner.ended).toEqual([{ id: late.id, reason: 'wait-timeout' }]);
    expect(engine.lock('a')?.holder).toBe(next);
  });

  it('grants a waiter whose deadline fell after a lease end that advance() handled late', () => {
    const { engine, fixed, clock } = engineFixture();
    fixed('a', new Owner(), 100);
    const waiter = fixed('a', new Owner(), 10_000, 150);
    clock.advance(200); // the lease ended at +100, still inside the wait; the timer runs at +200
    engine.advance();
    expect(waiter.state).toBe('holding');
  });
});

describe('counts and deadlines', () => {
  it('returns lockCount, heldCount and waiterCount to 0 when every claim is done', () => {
    const { engine, fixed, sliding, tick } = engineFixture();
    const a = fixed('a', new Owner(), 100);
    fixed('a', new Owner(), 100, 50);
    const b = sliding('b', new Owner(), 300);
    const bWaiter = sliding('b', new Owner(), 1_000);
    fixed('c', new Owner(), 100);
    fixed('c', new Owner(), 100);
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([3, 3, 3]);
    engine.release('a', a.token);
    engine.end(bWaiter);
    engine.end(b);
    tick(100); // a's second holder and c's holder expire; c's waiter is granted now
    tick(100); // and expires a lease later
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([0, 0, 0]);
    expect(engine.nextDeadline()).toBe(Number.POSITIVE_INFINITY);
  });

  it('reports no deadline for an empty engine and the earliest lease or wait deadline otherwise', () => {
    const { engine, fixed, clock } = engineFixture();
    expect(engine.nextDeadline()).toBe(Number.POSITIVE_INFINITY);
    const t0 = clock.now();
    fixed('a', new Owner(), 5_000);
    expect(engine.nextDeadline()).toBe(t0 + 5_000);
    fixed('a', new Owner(), 5_000, 2_000);
    expect(engine.nextDeadline()).toBe(t0 + 2_000);
    fixed('a', new Owner(), 5_000, 0); // waits forever: no deadline
    expect(engine.nextDeadline()).toBe(t0 + 2_000);
  });

  it('re-files a touched sliding lease when its old deadline comes, without expiring it', () => {
    const { engine, sliding, clock, tick } = engineFixture();
    const t0 = clock.now();
    const holder = sliding('a', new Owner(), 1_000);
    tick(600);
    engine.touch(holder);
    expect(engine.nextDeadline()).toBeLessThanOrEqual(t0 + 1_000); // filed lazily
    tick(400);
    expect(holder.state).toBe('holding');
    expect(engine.nextDeadline()).toBe(t0 + 1_600);
  });

  it('does nothing in advance() before the next deadline', () => {
    const { engine, fixed, tick } = engineFixture();
    const holder = fixed('a', new Owner(), 1_000);
    tick(999);
    expect(holder.state).toBe('holding');
    expect(engine.nextDeadline()).toBe(holder.expiresAt);
  });
});

describe('one claim, one owner', () => {
  it('refuses a release by token of a session claim and changes nothing: the session keeps the lock, its waiter keeps waiting', () => {
    const { engine, sliding } = engineFixture();
    const aOwner = new Owner();
    const a = sliding('a', aOwner);
    const bOwner = new Owner();
    const b = sliding('a', bOwner);
    expect(engine.release('a', a.token)).toBe('session-claim');
    expect(a.state).toBe('holding');
    expect(engine.lock('a')?.holder).toBe(a);
    expect(b.state).toBe('waiting');
    expect(bOwner.granted).toEqual([]);
    expect(aOwner.ended).toEqual([]);
    expect(engine.heldCount).toBe(1);
  });

  it('answers stale, not session-claim, for a token that no longer holds, whoever held it', () => {
    const { engine, sliding } = engineFixture();
    const a = sliding('a', new Owner());
    engine.end(a);
    expect(engine.release('a', a.token)).toBe('stale');
  });

  it('still releases a keyed grant by its token and hands the lock to a waiting session', () => {
    const { engine, fixed, sliding } = engineFixture();
    const k = fixed('a', new Owner());
    const sOwner = new Owner();
    const s = sliding('a', sOwner);
    expect(engine.release('a', k.token)).toBe('ok');
    expect(s.state).toBe('holding');
    expect(sOwner.granted).toEqual([s]);
  });
});
