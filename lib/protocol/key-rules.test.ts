import fc from 'fast-check';
import { describe, it, expect } from 'vitest';
import { isValidKey } from './key-rules.ts';
import { parseKey } from './wire-fields.ts';

/** What the server does with the bytes a client would send for `name`. */
function serverTakesAsIs(name: string): boolean {
  const bytes = Buffer.from(name, 'utf8');
  return parseKey(bytes, 0, bytes.length) === name;
}

/** The rule as docs/protocol.md states it, written independently of parseKey. */
function documentedRule(name: string): boolean {
  const bytes = Buffer.from(name, 'utf8');
  const wellFormed = bytes.toString('utf8') === name; // false for lone surrogates
  return wellFormed && bytes.length >= 1 && bytes.length <= 250 && !/[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name);
}

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
/** Characters near the edges of the rule, so short strings hit them often. */
const edgeChar = fc.constantFrom(
  ...['a', '~', ' ', '\t', '\n', '\r', '\0', '\x7f', '\x80', '\x85', '\x9f', '\xa0', 'é', '漢', '🔒'],
  ...['\u1680', '\u2000', '\u200b', '\u2028', '\u2029', '\u202f', '\u3000', '\ufeff', '\ufffd'],
  ...['\ud800', '\udbff', '\udc00', '\udfff', '\ud83d\udd12'],
);
const mixedUnit = fc.oneof(codeUnit, edgeChar, fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }));

const properties: [string, fc.Arbitrary<string>][] = [
  ['full Unicode', fc.string({ unit: 'binary', maxLength: 80 })],
  ['graphemes', fc.string({ unit: 'grapheme', maxLength: 80 })],
  ['arbitrary code units', fc.string({ unit: codeUnit, maxLength: 40 })],
  ['edge characters', fc.string({ unit: mixedUnit, maxLength: 12 })],
  ['long multi-byte names', fc.string({ unit: fc.constantFrom('a', 'é', '漢', '🔒'), minLength: 60, maxLength: 260 })],
];

describe('isValidKey', () => {
  for (const [label, strings] of properties) {
    it(`agrees with the server's parseKey on ${label}`, () => {
      fc.assert(
        fc.property(strings, (name) => isValidKey(name) === serverTakesAsIs(name)),
        { numRuns: 2000 },
      );
    });
  }

  it('matches the documented rule: 1-250 bytes of well-formed UTF-8 without whitespace or controls', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: mixedUnit, maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 80 })), (name) => {
        expect(isValidKey(name)).toBe(documentedRule(name));
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts visible ASCII and non-ASCII letters and symbols', () => {
    for (const name of ['k', 'jobs/nightly', 'a:b.c-d_e', '~!#$%', 'café', '漢字', '🔒lock']) expect(isValidKey(name)).toBe(true);
  });

  it('refuses the empty name, space and ASCII control characters', () => {
    for (const name of ['', ' ', 'two words', 'tab\there', 'nl\n', 'cr\r', 'nul\0', 'del\x7f', '\x01']) {
      expect(isValidKey(name)).toBe(false);
    }
  });

  it('refuses non-ASCII whitespace and format characters the server refuses', () => {
    // NBSP, NEL, line and paragraph separators, BOM / zero-width no-break space, zero-width space.
    for (const bad of ['\u00a0', '\u0085', '\u2028', '\u2029', '\ufeff', '\u200b', '\u3000']) {
      expect(isValidKey(`a${bad}b`)).toBe(false);
      expect(serverTakesAsIs(`a${bad}b`)).toBe(false);
    }
  });

  it('refuses lone surrogates, which would be sent as U+FFFD and granted as another key', () => {
    for (const name of ['\ud800', 'a\udc00', '\udbffz', '\ud83d']) expect(isValidKey(name)).toBe(false);
    expect(isValidKey('\ud83d\udd12')).toBe(true); // a proper pair is fine
    expect(isValidKey('\ufffd')).toBe(true); // the replacement character itself is a character
  });

  it('counts the limit in UTF-8 bytes: 250 is allowed, 251 is not', () => {
    expect(isValidKey('a'.repeat(250))).toBe(true);
    expect(isValidKey('a'.repeat(251))).toBe(false);
    expect(isValidKey('é'.repeat(125))).toBe(true); // 250 bytes
    expect(isValidKey('a' + 'é'.repeat(125))).toBe(false); // 251 bytes
    expect(isValidKey('a'.repeat(247) + '漢')).toBe(true); // 250 bytes
    expect(isValidKey('a'.repeat(248) + '漢')).toBe(false); // 251 bytes
    expect(isValidKey('a'.repeat(246) + '🔒')).toBe(true); // 250 bytes
    expect(isValidKey('a'.repeat(247) + '🔒')).toBe(false); // 251 bytes
  });
});
