// Grants that cannot be delivered, and the admin actions: force-release and kick.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from './claim.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

describe('undeliverable grants', () => {
  it('releases an undeliverable grant of a free lock at once and forgets the lock', () => {
    const { engine, fixed } = engineFixture();
    const claim = fixed('a', new Owner(false));
    expect(claim.state).toBe('ended');
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([0, 0, 0]);
    expect(engine.nextDeadline()).toBe(Number.POSITIVE_INFINITY);
  });

  it('skips an undeliverable waiter and hands the lock to the next one', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    const dead = fixed('a', new Owner(false));
    const alive = fixed('a', new Owner());
    engine.release('a', holder.token);
    expect(dead.state).toBe('ended');
    expect(alive.state).toBe('holding');
    expect(alive.token).toBeGreaterThan(dead.token);
    expect(dead.token).toBeGreaterThan(holder.token);
    expect(engine.heldCount).toBe(1);
  });

  it('keeps one holder when an owner ends its own claim inside onGranted and reports it undeliverable', () => {
    const { engine, fixed } = engineFixture();
    const reentrant: ClaimOwner = {
      onGranted: (claim) => {
        engine.end(claim); // the connection noticed it is gone and cleaned up
        return false;
      },
      onEnded: () => {},
    };
    const holder = fixed('a', new Owner());
    fixed('a', reentrant);
    const second = fixed('a', new Owner());
    const third = fixed('a', new Owner());
    engine.release('a', holder.token);
    expect(second.state).toBe('holding');
    expect(third.state).toBe('waiting');
    expect(engine.heldCount).toBe(1);
    expect(engine.waiterCount).toBe(1);
  });

  it('keeps the counts right when an owner ends an immediate grant inside onGranted', () => {
    const { engine, fixed } = engineFixture();
    const claim = engine.acquire({
      name: 'a',
      owner: {
        onGranted: (c) => {
          engine.end(c);
          return false;
        },
        onEnded: () => {},
      },
      protocol: 'keyed',
      client: 'k',
      leaseMs: 100,
      waitMs: 0,
      sliding: false,
    });
    expect(claim.state).toBe('ended');
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([0, 0, 0]);
    expect(fixed('a', new Owner()).state).toBe('holding');
  });
});

describe('admin', () => {
  it('force-releases the holder without a token, tells its owner and hands the lock on', () => {
    const { engine, fixed } = engineFixture();
    const owner = new Owner();
    const holder = fixed('a', owner);
    const next = fixed('a', new Owner());
    const result = engine.forceRelease('a');
    expect(result).toMatchObject({ ok: true, token: holder.token, claim: { id: holder.id, token: holder.token, state: 'ended' } });
    expect(holder.state).toBe('ended');
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'force-released' }]);
    expect(engine.lock('a')?.holder).toBe(next);
  });

  it('force-releases only the holder named by the token given', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    expect(engine.forceRelease('a', holder.token)).toMatchObject({ ok: true, token: holder.token });
    expect(engine.lockCount).toBe(0);
  });

  it('refuses a force-release with a stale token and reports the current holder token', () => {
    const { engine, fixed } = engineFixture();
    const first = fixed('a', new Owner());
    const second = fixed('a', new Owner());
    engine.release('a', first.token);
    expect(engine.forceRelease('a', first.token)).toEqual({ ok: false, reason: 'stale-token', holderToken: second.token });
    expect(second.state).toBe('holding');
  });

  it('reports not-held when force-releasing a free lock', () => {
    const { engine } = engineFixture();
    expect(engine.forceRelease('a')).toEqual({ ok: false, reason: 'not-held', holderToken: null });
  });

  it('kicks a waiter out of the queue, tells its owner and never grants it', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    const owner = new Owner();
    const kicked = fixed('a', owner);
    const stays = fixed('a', new Owner());
    expect(engine.kick('a', kicked.id)).toBe(true);
    expect(owner.ended).toEqual([{ id: kicked.id, reason: 'kicked' }]);
    engine.release('a', holder.token);
    expect(owner.granted).toEqual([]);
    expect(engine.lock('a')?.holder).toBe(stays);
  });

  it('kicks nobody when the id is the holder, unknown, or on another lock', () => {
    const { engine, fixed } = engineFixture();
    const holder = fixed('a', new Owner());
    const waiter = fixed('a', new Owner());
    expect(engine.kick('a', holder.id)).toBe(false);
    expect(engine.kick('a', 999)).toBe(false);
    expect(engine.kick('b', waiter.id)).toBe(false);
    expect(engine.waiterCount).toBe(1);
  });
});
