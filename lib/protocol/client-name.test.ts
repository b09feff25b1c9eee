import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_CLIENT_NAME_BYTES, isValidClientName, parseClientName, toClientName } from './client-name.ts';
import { encodeIdentityRequest, parseKeyedRequest, parseSeedRequest } from './keyed-codec.ts';
import { encodeClientRequest, parseSessionRequest } from './session-codec.ts';

const bytesOf = (s: string): Buffer => Buffer.from(s, 'utf8');
const parse = (s: string): string | null => {
  const b = bytesOf(s);
  return parseClientName(b, 0, b.length);
};

/** The rule as docs/protocol.md states it, written independently of parseClientName. */
function documentedRule(name: string): boolean {
  const bytes = bytesOf(name);
  const wellFormed = bytes.toString('utf8') === name;
  const badChar = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name) || /[^\S ]/u.test(name);
  return wellFormed && bytes.length >= 1 && bytes.length <= 128 && !name.startsWith(' ') && !name.endsWith(' ') && !badChar;
}

const edgeChar = fc.constantFrom(
  ...['a', 'Z', '~', ' ', '@', '\t', '\n', '\r', '\0', '\x7f', '\x85', '\xa0', 'é', '漢', '🔒', '\u200b', '\u202e', '\u2028', '\u3000', '\ufeff'],
  ...['\ud800', '\udfff'],
);
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 140 }), fc.string({ unit: edgeChar, maxLength: 40 }));
/** Valid identities, built from characters the rule allows (spaces inside). */
const validName = fc
  .string({ unit: fc.constantFrom('w', 'o', 'r', 'k', '-', '7', '@', '.', ' ', 'é', '漢', '🔒'), minLength: 1, maxLength: 40 })
  .map((s) => s.trim())
  .filter((s) => s.length > 0 && bytesOf(s).length <= MAX_CLIENT_NAME_BYTES);

describe('client identity rule', () => {
  it('takes a typical identity with spaces inside', () => {
    expect(parse('worker-7@host-3 pid 4121')).toBe('worker-7@host-3 pid 4121');
    expect(isValidClientName('baton run ./nightly.sh @host-3 pid 99')).toBe(true);
  });

  it('refuses empty, too long, space at either end, controls, format characters and other whitespace', () => {
    for (const bad of ['', ' a', 'a ', 'a\tb', 'a\u0000b', 'a\u007fb', 'a\u202eb', 'a\u200bb', 'a\u00a0b', 'a\u2028b', 'x'.repeat(129), 'é'.repeat(65)]) {
      expect([bad, parse(bad), isValidClientName(bad)]).toEqual([bad, null, false]);
    }
    expect(isValidClientName('x'.repeat(128))).toBe(true);
    expect(isValidClientName('\ud800')).toBe(false); // a lone surrogate would arrive as U+FFFD
  });

  it('refuses bytes that are not UTF-8', () => {
    const b = Buffer.from([0x61, 0xc3, 0x28]);
    expect(parseClientName(b, 0, b.length)).toBeNull();
  });

  it('agrees with the documented rule on any text', () => {
    fc.assert(fc.property(anyText, (s) => isValidClientName(s) === documentedRule(s)));
  });

  it('makes a valid identity of any text, no longer than 128 bytes', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const name = toClientName(s);
        return name === null || (isValidClientName(name) && bytesOf(name).length <= MAX_CLIENT_NAME_BYTES);
      }),
    );
    expect(toClientName(`baton run ${'x'.repeat(200)}`)?.length).toBe(128);
    expect(toClientName('  a\tb  ')).toBe('a?b');
    expect(toClientName('   ')).toBeNull();
  });

  it('round-trips any valid identity through the keyed I line and the session CLIENT line', () => {
    fc.assert(
      fc.property(validName, (name) => {
        const keyed = bytesOf(encodeIdentityRequest(name));
        const session = bytesOf(encodeClientRequest(name));
        expect(parseKeyedRequest(keyed, 0, keyed.length)).toEqual({ kind: 'identity', name });
        expect(parseSessionRequest(session, 0, session.length)).toEqual({ kind: 'client', name });
      }),
    );
  });

  it('parses every keyed line that is not an I request exactly as the seed protocol did', () => {
    const line = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.tuple(fc.constantFrom('A ', 'R ', 'I', 'IA ', 'II ', 'A', 'i ', ''), fc.string({ unit: edgeChar, maxLength: 20 })).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(line, (s) => {
        const b = bytesOf(s);
        fc.pre(!(b[0] === 0x49 && (b.length === 1 || b[1] === 0x20)));
        expect(parseKeyedRequest(b, 0, b.length)).toEqual(parseSeedRequest(b, 0, b.length));
      }),
    );
  });

  it('answers a bad keyed identity with E I ? bad-identity, and a bad session one with a protocol error', () => {
    for (const bad of ['I', 'I ', 'I  lead', 'I trail ', 'I a\tb']) {
      const b = bytesOf(bad);
      expect(parseKeyedRequest(b, 0, b.length)).toEqual({ kind: 'error', op: 'I', key: '?', error: 'bad-identity' });
    }
    const s = bytesOf('CLIENT  two-spaces');
    expect(parseSessionRequest(s, 0, s.length)).toMatchObject({ kind: 'error', detail: expect.stringContaining('bad identity') });
    const none = bytesOf('CLIENT');
    expect(parseSessionRequest(none, 0, none.length)).toMatchObject({ kind: 'error' });
  });
});
