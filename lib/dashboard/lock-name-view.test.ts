import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameFromText, viewLockName } from './lock-name-view.ts';

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Z}\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/u;

// Names from the characters that make look-alikes, mixed with ordinary ones.
const tricky = fc.constantFrom(
  'a',
  'b',
  'é',
  'e',
  '\u0301',
  '\\',
  'u',
  '{',
  '}',
  '3',
  '1',
  '6',
  '4',
  '/',
  'а' /* Cyrillic */,
  'ο' /* Greek */,
  '\u3164',
  '\u2800',
  '\u200b',
  '\u200d',
  '\u202e',
  '\u2066',
  '\ufeff',
  '\u00a0',
  '\u115f',
  '\ufe0f',
  '\u034f',
  '\ud800',
  '\udc00',
  '漢',
  'か',
  'カ',
  '한',
  'ก',
  '\u0e31',
);
const names = fc.oneof(fc.string({ unit: tricky, minLength: 1, maxLength: 8 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }));

describe('viewLockName', () => {
  it('shows a plain ASCII name as it is, unmarked', () => {
    expect(viewLockName('jobs/nightly')).toEqual({
      parts: [{ kind: 'text', text: 'jobs/nightly' }],
      text: 'jobs/nightly',
      mixedScripts: null,
      looksLatin: null,
      marked: false,
    });
  });

  it('escapes HANGUL FILLER, BRAILLE BLANK, zero-width and bidi characters as visible \\u{…} badges', () => {
    expect(viewLockName('\u3164').text).toBe('\\u{3164}');
    expect(viewLockName('a\u2800b').parts).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'escape', text: '\\u{2800}', codePoint: 0x2800 },
      { kind: 'text', text: 'b' },
    ]);
    expect(viewLockName('x\u200by').text).toBe('x\\u{200B}y');
    expect(viewLockName('abc\u202edef').text).toBe('abc\\u{202E}def');
    expect(viewLockName('a\u3164').marked).toBe(true);
  });

  it('tells a decomposed name from the composed one, and keeps an NFC name with marks readable', () => {
    expect(viewLockName('e\u0301').text).toBe('e\\u{0301}');
    expect(viewLockName('é').text).toBe('é');
    expect(viewLockName('สวัสดี').text).toBe('สวัสดี');
  });

  it('marks a name mixing Latin and Cyrillic, naming both, but not Japanese or a single script', () => {
    expect(viewLockName('pаypal').mixedScripts).toEqual(['Latin', 'Cyrillic']);
    expect(viewLockName('pаypal').marked).toBe(true);
    expect(viewLockName('ключ').mixedScripts).toBeNull();
    expect(viewLockName('漢字かなカナ-job').mixedScripts).toBeNull();
    expect(viewLockName('café-ünïcode').marked).toBe(false);
  });

  it('marks a wholly Cyrillic or Greek name made of Latin look-alikes, but not an ordinary one', () => {
    expect(viewLockName('аре').looksLatin).toBe('Cyrillic');
    expect(viewLockName('аре/ор').marked).toBe(true);
    expect(viewLockName('ΤΟΡ').looksLatin).toBe('Greek');
    expect(viewLockName('ключ').looksLatin).toBeNull();
    expect(viewLockName('ключ').marked).toBe(false);
    expect(viewLockName('λόγος').marked).toBe(false);
  });

  it('writes a backslash as \\\\, so a name spelling an escape is not the character it spells', () => {
    expect(viewLockName('\\u{3164}').text).toBe('\\\\u{3164}');
    expect(viewLockName('\\u{3164}').text).not.toBe(viewLockName('\u3164').text);
  });

  it('never shows two different names the same (the text decodes back to the name)', () => {
    fc.assert(
      fc.property(names, (name) => {
        expect(nameFromText(viewLockName(name).text)).toBe(name);
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(names, names, (a, b) => {
        fc.pre(a !== b);
        expect(viewLockName(a).text).not.toBe(viewLockName(b).text);
      }),
      { numRuns: 2_000 },
    );
  });

  it('leaves nothing invisible in the text, and marks exactly the names it escaped or found mixed', () => {
    fc.assert(
      fc.property(names, (name) => {
        const view = viewLockName(name);
        for (const part of view.parts) if (part.kind === 'text') expect(INVISIBLE.test(part.text), JSON.stringify(part.text)).toBe(false);
        expect(view.marked).toBe(view.parts.some((p) => p.kind === 'escape') || view.mixedScripts !== null || view.looksLatin !== null);
      }),
      { numRuns: 2_000 },
    );
  });
});
