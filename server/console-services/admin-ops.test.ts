import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { forceReleaseLocally, kickLocally, knownError } from './admin-ops.ts';

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
    const result = forceReleaseLocally(s.engine, s.clock, 'a', null);
    expect(viaJson(result)).toEqual(result);
    expect(result).toEqual({
      ok: true,
      body: {
        released: { name: 'a', token: first.token.toString(), protocol: 'keyed', client: '127.0.0.1:5000' },
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
    expect(forceReleaseLocally(s.engine, s.clock, 'a', old.token.toString())).toEqual({
      ok: false,
      error: 'stale-token',
      detail: `token ${old.token} does not hold a; the holder's token is ${current.token}`,
    });
    expect(current.state).toBe('holding');
    expect(forceReleaseLocally(s.engine, s.clock, 'a', current.token.toString())).toMatchObject({ ok: true, body: { nextHolder: null } });
  });

  it('answers not-found when nobody holds the lock', () => {
    const s = setup();
    expect(forceReleaseLocally(s.engine, s.clock, 'free', null)).toEqual({ ok: false, error: 'not-found', detail: 'nobody holds free' });
  });

  it('refuses a malformed name or token from a peer', () => {
    const s = setup();
    const h = s.hold('a');
    for (const token of ['', '-1', '1.5', '18446744073709551616', 'abc']) {
      expect(forceReleaseLocally(s.engine, s.clock, 'a', token), token).toMatchObject({ ok: false, error: 'invalid-input' });
    }
    expect(forceReleaseLocally(s.engine, s.clock, 'two words', null)).toMatchObject({ ok: false, error: 'invalid-input' });
    expect(h.state).toBe('holding');
  });
});

describe('kickLocally', () => {
  it('removes the waiter and tells its owner', () => {
    const s = setup();
    s.hold('a');
    const owner = new Owner();
    const w = s.hold('a', owner);
    expect(kickLocally(s.engine, 'a', w.id)).toEqual({ ok: true, body: { kicked: { name: 'a', id: String(w.id) } }, detail: `waiter ${w.id}` });
    expect(owner.ended).toEqual([{ id: w.id, reason: 'kicked' }]);
  });

  it('answers not-found for a holder, an unknown id or an idle lock', () => {
    const s = setup();
    const h = s.hold('a');
    expect(kickLocally(s.engine, 'a', h.id)).toEqual({ ok: false, error: 'not-found', detail: `no waiter ${h.id} in the queue of a` });
    expect(kickLocally(s.engine, 'idle', 3)).toMatchObject({ ok: false, error: 'not-found' });
  });

  it('refuses a claim id that is not a positive safe integer', () => {
    const s = setup();
    for (const id of [0, -1, 1.5, Number.NaN, 2 ** 60]) expect(kickLocally(s.engine, 'a', id), String(id)).toMatchObject({ ok: false, error: 'invalid-input' });
  });
});

describe('knownError', () => {
  it('keeps a known error name and maps anything else to internal', () => {
    expect(knownError('server-going-away')).toBe('server-going-away');
    expect(knownError('not-a-name')).toBe('internal');
    expect(knownError('toString')).toBe('internal');
  });
});
