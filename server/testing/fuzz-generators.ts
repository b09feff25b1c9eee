// Input pieces shared by the socket-level fuzz tests: bytes from text, garbage lines that never
// form a request by accident (no line break, no request word at the start), and how a planned
// line is cut into writes.
import fc from 'fast-check';
import type { Chunking } from './fuzz-helpers.ts';

export const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
export const bytesOf = (...parts: Array<string | readonly number[]>): Uint8Array =>
  new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p)))));
/** Made-up lines never contain a line break, and never start a request they did not mean to. */
export const noLineBreak = (b: Uint8Array): Uint8Array => b.map((x) => (x === 10 ? 11 : x));
const neverStarting =
  (words: RegExp) =>
  (b: Uint8Array): Uint8Array =>
    words.test(Buffer.from(b).toString('latin1')) ? bytesOf('X', [...b]) : b;

export const chunking: fc.Arbitrary<Chunking> = fc.record({
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
  delayMs: fc.integer({ min: 0, max: 8 }),
  coalesce: fc.boolean(),
});
export const ALL_AT_ONCE: Chunking = { cuts: [], delayMs: 0, coalesce: true };

/** Bytes nobody should mistake for a request, and the classic near misses. */
export function garbage(noRequest: RegExp): fc.Arbitrary<Uint8Array> {
  return fc
    .oneof(
      fc.string({ maxLength: 40 }).map(utf8),
      fc.string({ unit: 'binary', maxLength: 12 }).map(utf8),
      fc.uint8Array({ maxLength: 40 }),
      fc.constantFrom(bytesOf(''), bytesOf([0]), bytesOf([0xff, 0xfe]), bytesOf([0xc3, 0x28]), bytesOf([0xed, 0xa0, 0x80]), bytesOf('\r'), bytesOf(' ')),
    )
    .map(noLineBreak)
    .map(neverStarting(noRequest));
}

/**
 * Keys that are not UTF-8: a valid prefix and suffix around a lone continuation byte, an
 * overlong form, a surrogate, a code point past U+10FFFF, a byte UTF-8 never uses, or a
 * sequence cut short (at the end of the key too).
 */
export const invalidUtf8Key: fc.Arbitrary<Uint8Array> = fc
  .tuple(
    fc.constantFrom('', 'k', 'ключ'),
    fc.constantFrom(
      [0x80],
      [0xbf],
      [0xc0, 0xaf],
      [0xc1, 0xbf],
      [0xe0, 0x80, 0xaf],
      [0xf0, 0x80, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xed, 0xbf, 0xbf],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0xfe],
      [0xff],
      [0xe2, 0x82],
      [0xf0, 0x9f, 0x98],
      [0xc3],
    ),
    fc.constantFrom('', 'x', '/é'),
  )
  .map(([before, bad, after]) => bytesOf(before, bad, after));

/** Request-shaped lines (either protocol) whose key is not UTF-8; no line break. */
export const invalidUtf8: fc.Arbitrary<Uint8Array> = fc
  .tuple(fc.constantFrom(['A ', ' 0.1 0'], ['R ', ' 1'], ['ACQUIRE ', ' 100'], ['', '']), invalidUtf8Key)
  .map(([[before, after], key]) => bytesOf(before, [...key], after));
