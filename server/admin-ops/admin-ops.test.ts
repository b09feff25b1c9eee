import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { forceReleaseLocally, kickLocally } from './admin-ops.ts';
import { adminOpFromWire, lockNameSchema } from '../../lib/ops-api/admin-request.ts';

/** A checked name, as the HTTP or peer edge hands it in. */
const name = (text: string) => lockNameSchema.parse(text);

function setup() {
  const f = engineFixture({ blockSize: 16n });
  const clock = { now: () => f.clock.now(), wall: (ms: number) => 1_700_000_000_000 + ms };
  const hold = (name: string, owner = new Owner()) =>
    f.engine.acquire({ name, owner, protocol: 'keyed', client: '127.0.0.1:5000', leaseMs: 30_000, waitMs: 0, sliding: false });
  return { ...f, clock, hold };
}

/** Whatever an op returns must survive the peer link unchanged. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('forceReleaseLocally', () => {
  it('releases the holder, names the next one, and returns JSON-safe data', () => {
    const s = setup();
    const owner = new Owner();
    const first = s.hold('a', owner);
    const next = s.hold('a');
    const result = forceReleaseLocally(s.engine, s.clock, name('a'), null);
    expect(viaJson(result)).toEqual(result);
    expect(result).toEqual({
      ok: true,
      body: {
        released: { name: 'a', token: first.token.toString(), protocol: 'keyed', client: '127.0.0.1:5000', clientName: null },
        nextHolder: expect.objectContaining({ claimId: String(next.id), token: next.token.toString() }),
      },
      detail: `token ${first.token} held by 127.0.0.1:5000 (keyed); now token ${next.token}`,
    });
    expect(owner.ended).toEqual([{ id: first.id, reason: 'force-released' }]);
  });

  it('releases only the holder of the given token', () => {
    const s = setup();
    const old = s.hold('a');
    const current = s.hold('a');
    s.engine.release('a', old.token);
    expect(forceReleaseLocally(s.engine, s.clock, name('a'), old.token)).toEqual({
      ok: false,
      error: 'stale-token',
      detail: `token ${old.token} does not hold a; the holder's token is ${current.token}`,
    });
    expect(current.state).toBe('holding');
    expect(forceReleaseLocally(s.engine, s.clock, name('a'), current.token)).toMatchObject({ ok: true, body: { nextHolder: null } });
  });

  it('answers not-found when nobody holds the lock', () => {
    const s = setup();
    expect(forceReleaseLocally(s.engine, s.clock, name('free'), null)).toEqual({ ok: false, error: 'not-found', detail: 'nobody holds free' });
  });

  // A peer's op is checked where it enters (adminOpFromWire), before anything reaches the engine.
  it('refuses a malformed name or token from a peer', () => {
    const s = setup();
    const h = s.hold('a');
    for (const token of ['', '-1', '1.5', '18446744073709551616', 'abc']) {
      expect(adminOpFromWire({ op: 'force-release', lock: 'a', token }), token).toMatchObject({ ok: false, error: 'invalid-input' });
    }
    expect(adminOpFromWire({ op: 'force-release', lock: 'two words', token: null })).toMatchObject({ ok: false, error: 'invalid-input' });
    expect(h.state).toBe('holding');
  });
});

describe('kickLocally', () => {
  it('removes the waiter and tells its owner', () => {
    const s = setup();
    s.hold('a');
    const owner = new Owner();
    const w = s.hold('a', owner);
    expect(kickLocally(s.engine, name('a'), w.id)).toEqual({
      ok: true,
      body: { kicked: { name: 'a', id: String(w.id) } },
      detail: `waiter ${w.id} of 127.0.0.1:5000 (keyed)`,
    });
    expect(owner.ended).toEqual([{ id: w.id, reason: 'kicked' }]);
  });

  it('answers not-found for a holder, an unknown id or an idle lock', () => {
    const s = setup();
    const h = s.hold('a');
    expect(kickLocally(s.engine, name('a'), h.id)).toEqual({ ok: false, error: 'not-found', detail: `no waiter ${h.id} in the queue of a` });
    expect(kickLocally(s.engine, name('idle'), 3)).toMatchObject({ ok: false, error: 'not-found' });
  });

  // Checked where a peer's op enters (adminOpFromWire); the HTTP edge has checkClaimId.
  it('refuses a claim id that is not a positive safe integer', () => {
    for (const id of [0, -1, 1.5, Number.NaN, 2 ** 60])
      expect(adminOpFromWire({ op: 'kick', lock: 'a', claimId: id }), String(id)).toMatchObject({ ok: false, error: 'invalid-input' });
  });
});
