import { describe, expect, it } from 'vitest';
import type { Claim, ClaimOwner } from './claim.ts';
import type { ClaimEvent } from './events.ts';
import { engineFixture } from './testing/engine-fixture.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const gone: ClaimOwner = { onGranted: () => false, onEnded: () => {} };

// The fixture's engine, with its own claim helpers: these name the client address that the
// events carry, and take the owner last since most claims here have the same live one.
function setup() {
  const { clock, engine } = engineFixture({ blockSize: 100n });
  const events: ClaimEvent[] = [];
  const unsubscribe = engine.subscribe((e) => {
    if (e.type !== 'reset') events.push(e);
  });
  const fixed = (name: string, leaseMs = 10_000, waitMs = 0, owner = live) =>
    engine.acquire({ name, owner, protocol: 'keyed', client: '10.0.0.1:1', leaseMs, waitMs, sliding: false });
  const sliding = (name: string, leaseMs = 10_000, waitMs = 0) =>
    engine.acquire({ name, owner: live, protocol: 'session', client: '10.0.0.2:2', leaseMs, waitMs, sliding: true });
  /** Forgets what happened so far, so a test sees only the events of the step it checks. */
  const take = () => events.splice(0);
  return { clock, engine, events, unsubscribe, fixed, sliding, take };
}

describe('lock engine events', () => {
  it('emits a grant with no handover for a free lock', () => {
    const { take, sliding } = setup();
    const claim = sliding('a', 700);
    expect(take()).toEqual([
      {
        type: 'grant',
        at: 1_000,
        lock: 'a',
        claimId: claim.id,
        token: 1n,
        protocol: 'session',
        client: '10.0.0.2:2',
        clientName: null,
        leaseMs: 700,
        sliding: true,
        waitedMs: 0,
        handoverMs: null,
        handoverCause: null,
      },
    ]);
  });

  it('emits enqueue with the queue position and the absolute wait deadline, or null for forever', () => {
    const { take, fixed } = setup();
    fixed('a');
    take();
    const first = fixed('a', 100, 0);
    const second = fixed('a', 100, 250);
    expect(take()).toEqual([
      { type: 'enqueue', at: 1_000, lock: 'a', claimId: first.id, protocol: 'keyed', client: '10.0.0.1:1', clientName: null, position: 1, waitDeadline: null },
      {
        type: 'enqueue',
        at: 1_000,
        lock: 'a',
        claimId: second.id,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        position: 2,
        waitDeadline: 1_250,
      },
    ]);
  });

  it('emits release then a grant caused by the release, with the time the waiter spent queued', () => {
    const { take, fixed, engine, clock } = setup();
    const holder = fixed('a');
    const waiter = fixed('a');
    clock.advance(40);
    take();
    engine.release('a', holder.token);
    expect(take()).toEqual([
      {
        type: 'release',
        at: 1_040,
        lock: 'a',
        claimId: holder.id,
        token: 1n,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        grantedAt: 1_000,
        waitedMs: 0,
        cause: 'release',
      },
      expect.objectContaining({ type: 'grant', claimId: waiter.id, token: 2n, waitedMs: 40, handoverMs: 0, handoverCause: 'release' }),
    ]);
  });

  it('marks a handover after the holder disconnected with cause disconnect', () => {
    const { take, fixed, engine } = setup();
    const holder = fixed('a');
    fixed('a');
    take();
    engine.end(holder);
    expect(take().map((e) => [e.type, 'cause' in e ? e.cause : e.type === 'grant' ? e.handoverCause : null])).toEqual([
      ['release', 'disconnect'],
      ['grant', 'disconnect'],
    ]);
  });

  it('measures expiry handover latency from the lease end when advance() runs late', () => {
    const { take, fixed, engine, clock } = setup();
    const holder = fixed('a', 100);
    const waiter = fixed('a');
    take();
    clock.advance(250); // the lease ended at 1,100; the timer fires at 1,250
    engine.advance();
    expect(take()).toEqual([
      // Its last sign of life was its grant (a fixed lease), at 1,000.
      {
        type: 'expire',
        at: 1_250,
        lock: 'a',
        claimId: holder.id,
        token: holder.token,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        grantedAt: 1_000,
        waitedMs: 0,
        lastAliveAt: 1_000,
      },
      expect.objectContaining({ type: 'grant', at: 1_250, claimId: waiter.id, waitedMs: 250, handoverMs: 150, handoverCause: 'expiry' }),
    ]);
  });

  it("gives an expiry the sliding holder's last sign of life: its last touch, not its grant", () => {
    const { take, sliding, engine, clock } = setup();
    const holder = sliding('a', 100);
    clock.advance(80);
    engine.touch(holder); // alive at 1,080: the lease now ends at 1,180
    take();
    clock.advance(130); // the timer fires at 1,210, 30 ms late
    engine.advance();
    expect(take()).toEqual([expect.objectContaining({ type: 'expire', at: 1_210, claimId: holder.id, lastAliveAt: 1_080 })]);
  });

  it('emits force-release then a grant caused by it', () => {
    const { take, fixed, engine } = setup();
    const holder = fixed('a');
    const waiter = fixed('a');
    take();
    engine.forceRelease('a');
    expect(take()).toEqual([
      {
        type: 'force-release',
        at: 1_000,
        lock: 'a',
        claimId: holder.id,
        token: holder.token,
        protocol: 'keyed',
        client: '10.0.0.1:1',
        clientName: null,
        grantedAt: 1_000,
        waitedMs: 0,
      },
      expect.objectContaining({ type: 'grant', claimId: waiter.id, handoverMs: 0, handoverCause: 'force-release' }),
    ]);
  });

  it('emits a granted-then-released pair for an undeliverable grant, and the next grant is caused by disconnect', () => {
    const { take, fixed, engine } = setup();
    const holder = fixed('a');
    const dead = fixed('a', 10_000, 0, gone);
    const alive = fixed('a');
    take();
    engine.release('a', holder.token);
    expect(take().map((e) => [e.type, e.claimId])).toEqual([
      ['release', holder.id],
      ['grant', dead.id],
      ['release', dead.id],
      ['grant', alive.id],
    ]);
  });

  it('emits leave-queue with reason timeout, disconnect or expired', () => {
    const { take, fixed, sliding, engine, clock } = setup();
    fixed('a');
    const timesOut = fixed('a', 10_000, 100);
    const disconnects = fixed('a');
    const silent = sliding('a', 200);
    take();
    engine.end(disconnects);
    clock.advance(200);
    engine.advance();
    expect(take()).toEqual([
      { type: 'leave-queue', at: 1_000, lock: 'a', claimId: disconnects.id, protocol: 'keyed', reason: 'disconnect' },
      { type: 'leave-queue', at: 1_200, lock: 'a', claimId: timesOut.id, protocol: 'keyed', reason: 'timeout' },
      { type: 'leave-queue', at: 1_200, lock: 'a', claimId: silent.id, protocol: 'session', reason: 'expired' },
    ]);
  });

  it('emits kick for an admin kick, not leave-queue', () => {
    const { take, fixed, engine, clock } = setup();
    fixed('a');
    const waiter = fixed('a');
    take();
    clock.advance(40);
    engine.kick('a', waiter.id);
    expect(take()).toEqual([{ type: 'kick', at: 1_040, lock: 'a', claimId: waiter.id, protocol: 'keyed', client: '10.0.0.1:1', waitedMs: 40 }]);
  });

  it('times out a waiter whose wait ended before a release that came before the timer, then grants the next one', () => {
    const { take, fixed, engine, clock } = setup();
    const holder = fixed('a');
    const late = fixed('a', 10_000, 50);
    const next = fixed('a');
    take();
    clock.advance(80);
    engine.release('a', holder.token);
    expect(take().map((e) => [e.type, e.claimId, e.type === 'leave-queue' ? e.reason : null])).toEqual([
      ['leave-queue', late.id, 'timeout'],
      ['release', holder.id, null],
      ['grant', next.id, null],
    ]);
  });

  it('expires a lapsed holder before a release that came before the timer: the release is stale', () => {
    const { take, fixed, engine, clock } = setup();
    const holder = fixed('a', 100);
    const next = fixed('a');
    take();
    clock.advance(100);
    expect(engine.release('a', holder.token)).toBe('stale');
    expect(take().map((e) => [e.type, e.claimId])).toEqual([
      ['expire', holder.id],
      ['grant', next.id],
    ]);
  });

  it('grants at once an acquire that comes after the holder lapsed but before the timer', () => {
    const { take, fixed, engine, clock } = setup();
    fixed('a', 100);
    take();
    clock.advance(150);
    const late = fixed('a');
    expect(late.state).toBe('holding');
    expect(take().map((e) => e.type)).toEqual(['expire', 'grant']);
    expect(engine.lock('a')?.holder?.id).toBe(late.id);
  });

  it('stops delivering events after unsubscribe', () => {
    const { events, unsubscribe, fixed } = setup();
    fixed('a');
    unsubscribe();
    fixed('b');
    expect(events.map((e) => e.lock)).toEqual(['a']);
  });

  it('reports the grant token on the release and expire events of the same claim', () => {
    const { take, fixed, engine, clock } = setup();
    const tokens: bigint[] = [];
    const a: Claim = fixed('a', 100);
    const b: Claim = fixed('b', 100);
    engine.release('a', a.token);
    clock.advance(100);
    engine.advance();
    for (const e of take()) if ('token' in e) tokens.push(e.token);
    expect(tokens).toEqual([a.token, b.token, a.token, b.token]);
  });
});
