import { describe, expect, it } from 'vitest';
import { type AdminOp, adminOpFromWire, adminOpToWire, clientMatchTextSchema, lockNameSchema, u64TextSchema } from './admin-request.ts';

const name = (text: string) => lockNameSchema.parse(text);

describe('the typed admin request', () => {
  it('crosses the peer link and comes back the same op, the token as text only on the wire', () => {
    const ops: AdminOp[] = [
      { op: 'force-release', lock: name('jobs/nightly'), token: 18446744073709551615n },
      { op: 'force-release', lock: name('a'), token: null },
      { op: 'kick', lock: name('a'), claimId: 12 },
      { op: 'handoff', target: 'b' },
      { op: 'handoff', target: null },
      { op: 'restore', node: null },
      {
        op: 'release-client',
        client: { by: 'identity', value: clientMatchTextSchema.parse('worker-7@host-3 pid 4121') },
        tokens: [42n, 18446744073709551615n],
      },
      { op: 'release-client', client: { by: 'address', value: clientMatchTextSchema.parse('127.0.0.1:5312') }, tokens: [7n] },
    ];
    for (const op of ops) {
      const wire = JSON.parse(JSON.stringify(adminOpToWire(op)));
      expect(adminOpFromWire(wire)).toEqual({ ok: true, op });
    }
    expect(adminOpToWire({ op: 'force-release', lock: name('a'), token: 7n })).toEqual({ op: 'force-release', lock: 'a', token: '7' });
  });

  it('refuses a bulk release by client from a peer with a bad client, no or an unknown kind of match, a bad token or over 10,000 tokens', () => {
    const tooMany = Array.from({ length: 10_001 }, () => '1');
    for (const raw of [
      { op: 'release-client', by: 'identity', client: ' x', tokens: ['1'] },
      { op: 'release-client', client: 'x', tokens: ['1'] },
      { op: 'release-client', by: 'either', client: 'x', tokens: ['1'] },
      { op: 'release-client', by: 'address', client: 'x', tokens: ['-1'] },
      { op: 'release-client', by: 'address', client: 'x', tokens: tooMany },
    ]) {
      expect(adminOpFromWire(raw)).toMatchObject({ ok: false, error: 'invalid-input' });
    }
  });

  it('reads tokens by the one u64 rule: 1-20 digits, at most 2^64-1, leading zeros allowed', () => {
    expect(u64TextSchema.parse('007')).toBe(7n);
    expect(u64TextSchema.parse('18446744073709551615')).toBe(18446744073709551615n);
    for (const bad of ['', '-1', '+1', '1.5', '18446744073709551616', '123456789012345678901', ' 1'])
      expect(u64TextSchema.safeParse(bad).success, bad).toBe(false);
  });

  it('refuses what a peer of another version might send, naming the field', () => {
    expect(adminOpFromWire({ op: 'force-release', lock: 'a', token: 7 })).toMatchObject({
      ok: false,
      error: 'invalid-input',
      detail: expect.stringContaining('token'),
    });
    expect(adminOpFromWire({ op: 'kick', lock: 'a b', claimId: 1 })).toMatchObject({ ok: false, detail: expect.stringContaining('lock') });
    expect(adminOpFromWire({ op: 'drop-everything' })).toMatchObject({ ok: false, error: 'invalid-input' });
    expect(adminOpFromWire(null)).toMatchObject({ ok: false, error: 'invalid-input' });
    expect(adminOpFromWire({ op: 'restore' })).toMatchObject({ ok: false, error: 'invalid-input' });
  });
});
