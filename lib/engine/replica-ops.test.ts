// A standby's engine as the replication stream drives it, what it does after a promotion, and
// reset (the state is replaced wholesale).
import { describe, expect, it } from 'vitest';
import type { ClaimEvent, LockEvent } from './events.ts';
import { DETACHED_OWNER, type ReplicaGrant, type ReplicaWaiter } from './lock-engine.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

const NEVER = Number.POSITIVE_INFINITY;

function grant(over: Partial<ReplicaGrant> = {}): ReplicaGrant {
  return {
    lock: 'a',
    claimId: 10,
    token: 100n,
    protocol: 'keyed',
    client: '10.0.0.1:1',
    leaseMs: 5_000,
    sliding: false,
    remainingMs: 5_000,
    heldForMs: 0,
    handoverMs: null,
    handoverCause: null,
    ...over,
  };
}

function waiter(over: Partial<ReplicaWaiter> = {}): ReplicaWaiter {
  return {
    lock: 'a',
    claimId: 11,
    protocol: 'keyed',
    client: '10.0.0.1:2',
    leaseMs: 5_000,
    sliding: false,
    waitingForMs: 0,
    waitRemainingMs: null,
    ...over,
  };
}

function setup() {
  const f = engineFixture();
  const events: LockEvent[] = [];
  f.engine.subscribe((e) => events.push(e));
  const take = () => events.splice(0);
  const queueIds = (name: string) =>
    f.engine
      .lock(name)
      ?.queue()
      .map((c) => c.id) ?? [];
  return { ...f, take, queueIds };
}

describe('replica operations', () => {
  it('installs a replicated holder with the active claim id, token and remaining lease', () => {
    const { engine, take } = setup();
    engine.replicaGrant(grant({ remainingMs: 3_000, heldForMs: 400, handoverMs: 2, handoverCause: 'release' }));
    const holder = engine.lock('a')?.holder;
    expect([holder?.id, holder?.token, holder?.owner, holder?.state]).toEqual([10, 100n, DETACHED_OWNER, 'holding']);
    expect([holder?.grantedAt, holder?.expiresAt]).toEqual([600, 4_000]);
    expect([engine.heldCount, engine.nextDeadline()]).toEqual([1, 4_000]);
    expect(take()).toEqual([
      {
        type: 'grant',
        at: 1_000,
        lock: 'a',
        claimId: 10,
        token: 100n,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        leaseMs: 5_000,
        sliding: false,
        waitedMs: 0,
        handoverMs: 2,
        handoverCause: 'release',
      },
    ]);
  });

  it('emits nothing when told not to (a snapshot being installed)', () => {
    const { engine, take } = setup();
    engine.replicaGrant(grant(), false);
    engine.replicaEnqueue(waiter(), false);
    expect(engine.replicaLeaveQueue('a', 11, 'timeout', false)).toBe(true);
    expect(engine.replicaEndHolder('a', 10, 'release', false)).toBe(true);
    expect(take()).toEqual([]);
  });

  it('queues replicated waiters at the tail, outside the deadline heap', () => {
    const { engine, take, queueIds } = setup();
    engine.replicaGrant(grant());
    engine.replicaEnqueue(waiter({ claimId: 11, waitRemainingMs: 250 }));
    engine.replicaEnqueue(waiter({ claimId: 12, sliding: true, protocol: 'session' }));
    expect(queueIds('a')).toEqual([11, 12]);
    expect(engine.waiterCount).toBe(2);
    expect(engine.nextDeadline()).toBe(6_000); // the holder's lease only
    expect(take().slice(1)).toEqual([
      { type: 'enqueue', at: 1_000, lock: 'a', claimId: 11, protocol: 'keyed', client: '10.0.0.1:2', clientName: null, position: 1, waitDeadline: 1_250 },
      { type: 'enqueue', at: 1_000, lock: 'a', claimId: 12, protocol: 'session', client: '10.0.0.1:2', clientName: null, position: 2, waitDeadline: null },
    ]);
  });

  it('moves a granted waiter out of the queue without a leave-queue event', () => {
    const { engine, take, queueIds } = setup();
    engine.replicaGrant(grant());
    engine.replicaEnqueue(waiter({ claimId: 11 }));
    engine.replicaEnqueue(waiter({ claimId: 12 }));
    take();
    engine.replicaEndHolder('a', 10, 'release');
    engine.replicaGrant(grant({ claimId: 11, token: 101n }));
    expect(take().map((e) => e.type)).toEqual(['release', 'grant']);
    expect(engine.lock('a')?.holder?.id).toBe(11);
    expect(queueIds('a')).toEqual([12]);
    expect([engine.heldCount, engine.waiterCount]).toEqual([1, 1]);
  });

  it('ends a holder it missed the end of silently when the next grant comes', () => {
    const { engine, take } = setup();
    engine.replicaGrant(grant());
    const stale = engine.lock('a')?.holder;
    take();
    engine.replicaGrant(grant({ claimId: 20, token: 105n }));
    expect(take().map((e) => e.type)).toEqual(['grant']);
    expect(stale?.state).toBe('ended');
    expect([engine.heldCount, engine.lock('a')?.holder?.id]).toEqual([1, 20]);
  });

  it('ends a holder without handing the lock on, with the event that matches how it ended', () => {
    const { engine, take, queueIds } = setup();
    engine.replicaGrant(grant());
    engine.replicaEnqueue(waiter());
    take();
    expect(engine.replicaEndHolder('a', 10, 'disconnect')).toBe(true);
    expect(take()).toEqual([
      {
        type: 'release',
        at: 1_000,
        lock: 'a',
        claimId: 10,
        token: 100n,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        grantedAt: 1_000,
        waitedMs: 0,
        cause: 'disconnect',
      },
    ]);
    expect(engine.lock('a')?.holder).toBeNull();
    expect(queueIds('a')).toEqual([11]);
    engine.replicaGrant(grant({ lock: 'b', claimId: 30, token: 101n }));
    engine.replicaGrant(grant({ lock: 'c', claimId: 31, token: 102n }));
    take();
    engine.replicaEndHolder('b', 30, 'expire');
    engine.replicaEndHolder('c', 31, 'force-release');
    expect(take().map((e) => [e.type, (e as ClaimEvent).lock])).toEqual([
      ['expire', 'b'],
      ['force-release', 'c'],
    ]);
    expect([engine.lock('b'), engine.lock('c'), engine.lockCount]).toEqual([undefined, undefined, 1]);
  });

  it('changes nothing for an end or a leave of a claim that is not there', () => {
    const { engine, take } = setup();
    engine.replicaGrant(grant());
    engine.replicaEnqueue(waiter());
    take();
    expect(engine.replicaEndHolder('a', 11, 'release')).toBe(false);
    expect(engine.replicaEndHolder('zz', 10, 'release')).toBe(false);
    expect(engine.replicaLeaveQueue('a', 10, 'timeout')).toBe(false);
    expect(engine.replicaLeaveQueue('zz', 11, 'timeout')).toBe(false);
    expect(take()).toEqual([]);
    expect([engine.heldCount, engine.waiterCount]).toEqual([1, 1]);
  });

  it('takes waiters out with a leave-queue event, or a kick event, and forgets an idle lock', () => {
    const { engine, take } = setup();
    engine.replicaEnqueue(waiter({ claimId: 11 }));
    engine.replicaEnqueue(waiter({ claimId: 12 }));
    take();
    expect(engine.replicaLeaveQueue('a', 12, 'expired')).toBe(true);
    expect(engine.replicaLeaveQueue('a', 11, 'kick')).toBe(true);
    expect(take()).toEqual([
      { type: 'leave-queue', at: 1_000, lock: 'a', claimId: 12, protocol: 'keyed', reason: 'expired' },
      { type: 'kick', at: 1_000, lock: 'a', claimId: 11, protocol: 'keyed', client: '10.0.0.1:2', waitedMs: 0 },
    ]);
    expect([engine.lockCount, engine.waiterCount]).toEqual([0, 0]);
  });

  it('moves a sliding holder lease end on renew, later or earlier, without an event', () => {
    const { engine, take, clock } = setup();
    engine.replicaGrant(grant({ sliding: true, protocol: 'session', remainingMs: 1_000 }));
    take();
    clock.advance(500);
    engine.replicaRenew('a', 10, 1_000);
    expect(engine.lock('a')?.holder?.expiresAt).toBe(2_500);
    engine.replicaRenew('a', 10, 200);
    expect([engine.lock('a')?.holder?.expiresAt, engine.nextDeadline()]).toEqual([1_700, 1_700]);
    engine.replicaRenew('a', 99, 5_000); // not the holder: nothing
    expect(engine.lock('a')?.holder?.expiresAt).toBe(1_700);
    expect(take()).toEqual([]);
  });

  it('never reuses a replicated claim id, nor issues a token at or below a replicated one', () => {
    const { engine, fixed } = setup();
    engine.replicaGrant(grant({ claimId: 40, token: 500n }));
    engine.replicaEnqueue(waiter({ claimId: 41 }));
    engine.replicaLeaveQueue('a', 41, 'timeout');
    const fresh = fixed('b', new Owner());
    expect(fresh.id).toBe(42);
    expect(fresh.token).toBe(501n);
  });
});

describe('after a promotion', () => {
  it('drops replicated waiters and session holders with engine.end, like claims of closed connections', () => {
    const { engine, take } = setup();
    engine.replicaGrant(grant({ protocol: 'session', sliding: true }));
    engine.replicaEnqueue(waiter({ claimId: 11 }));
    const [w] = engine.lock('a')?.queue() ?? [];
    const h = engine.lock('a')?.holder;
    take();
    if (w === undefined || !h) throw new Error('missing replicated claims');
    engine.end(w);
    engine.end(h);
    expect(take()).toEqual([
      { type: 'leave-queue', at: 1_000, lock: 'a', claimId: 11, protocol: 'keyed', reason: 'disconnect' },
      {
        type: 'release',
        at: 1_000,
        lock: 'a',
        claimId: 10,
        token: 100n,
        protocol: 'session',
        client: '10.0.0.1:1',
        clientName: null,
        grantedAt: 1_000,
        waitedMs: 0,
        cause: 'disconnect',
      },
    ]);
    expect([engine.lockCount, engine.heldCount, engine.waiterCount, engine.nextDeadline()]).toEqual([0, 0, 0, NEVER]);
  });

  it('keeps a keyed holder: its token releases it, and a new claim waiting for it is handed the lock', () => {
    const { engine, fixed, take } = setup();
    engine.replicaGrant(grant({ token: 300n }));
    const owner = new Owner();
    const next = fixed('a', owner);
    expect(next.state).toBe('waiting');
    expect(engine.release('a', 299n)).toBe('stale');
    expect(engine.release('a', 300n)).toBe('ok');
    expect([next.state, next.token, owner.granted]).toEqual(['holding', 301n, [next]]);
    expect(take().map((e) => e.type)).toEqual(['grant', 'enqueue', 'release', 'grant']);
  });

  it('expires a keyed holder at its replicated lease end once the engine advances', () => {
    const { engine, tick, fixed } = setup();
    engine.replicaGrant(grant({ remainingMs: 700 }));
    const next = fixed('a', new Owner());
    tick(699);
    expect(engine.lock('a')?.holder?.id).toBe(10);
    tick(1);
    expect(engine.lock('a')?.holder).toBe(next);
  });
});

describe('reset', () => {
  it('ends every claim silently, forgets every lock and emits one reset event', () => {
    const { engine, fixed, sliding, take } = setup();
    const owner = new Owner();
    const a = fixed('a', owner);
    const w = fixed('a', owner, 10_000, 500);
    const s = sliding('b', owner);
    engine.replicaGrant(grant({ lock: 'c', claimId: 50, token: 90n }));
    take();
    engine.reset();
    // The event lists the holders it ended (the console lists them as ended by failover); not the waiter.
    expect(take()).toEqual([
      {
        type: 'reset',
        at: 1_000,
        ended: [
          expect.objectContaining({ lock: 'a', claimId: a.id, token: a.token, grantedAt: 1_000 }),
          expect.objectContaining({ lock: 'b', claimId: s.id, protocol: 'session' }),
          expect.objectContaining({ lock: 'c', claimId: 50, token: 90n, client: '10.0.0.1:1' }),
        ],
      },
    ]);
    expect([a.state, w.state, s.state]).toEqual(['ended', 'ended', 'ended']);
    expect(owner.ended).toEqual([]);
    expect([engine.lockCount, engine.heldCount, engine.waiterCount, engine.nextDeadline()]).toEqual([0, 0, 0, NEVER]);
    expect([...engine.allLocks()]).toEqual([]);
  });

  it('lets connections that still hold old claims end them without effect', () => {
    const { engine, fixed, tick, take } = setup();
    const owner = new Owner();
    const old = fixed('a', owner, 100);
    const oldWaiter = fixed('a', owner);
    engine.reset();
    const fresh = fixed('a', owner);
    take();
    engine.end(old);
    engine.end(oldWaiter);
    engine.touch(old);
    expect(engine.release('a', old.token)).toBe('stale');
    tick(200);
    expect(take()).toEqual([]);
    expect(owner.ended).toEqual([]);
    expect([fresh.state, fresh.id > oldWaiter.id, fresh.token > old.token]).toEqual(['holding', true, true]);
  });
});
