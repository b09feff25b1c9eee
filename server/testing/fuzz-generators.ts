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
const neverStarting = (words: RegExp) => (b: Uint8Array): Uint8Array =>
  words.test(Buffer.from(b).toString('latin1')) ? bytesOf('X', [...b]) : b;

export const chunking: fc.Arbitrary<Chunking> = fc.record({
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
  delayMs: fc.integer({ min: 0, max: 8 }),
  coalesce: fc.boolean(),
});
export const ALL_AT_ONCE: Chunking = { cuts: [], delayMs: 0, coalesce: true };

/** Bytes nobody should mistake for a request, and the classic near misses. */
export function garbage(noRequest: RegExp): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.string({ maxLength: 40 }).map(utf8),
    fc.string({ unit: 'binary', maxLength: 12 }).map(utf8),
    fc.uint8Array({ maxLength: 40 }),
    fc.constantFrom(
      bytesOf(''), bytesOf([0]), bytesOf([0xff, 0xfe]), bytesOf([0xc3, 0x28]), bytesOf([0xed, 0xa0, 0x80]), bytesOf('\r'), bytesOf(' '),
    ),
  ).map(noLineBreak).map(neverStarting(noRequest));
}
