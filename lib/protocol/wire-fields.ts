// Byte-level field parsers shared by both protocols: keys, decimal seconds, integers and u64
// tokens, scanned from a Buffer range without regexes or intermediate strings.
import { isUtf8 } from 'node:buffer';
import { U64_MAX } from './u64-text.ts';

export const MAX_KEY_BYTES = 250;
const ZERO = 48;
const NINE = 57;
const DOT = 46;

// Whitespace or control characters outside ASCII (NEL, NBSP, line/paragraph separators...).
const NON_ASCII_FORBIDDEN = /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Keys shorter than this are copied by String#slice; from this length V8 makes a slice that
 * points into the whole string it came from (SlicedString::kMinLength), which a key kept as a
 * lock's name would keep alive (a chunk of up to 64 KiB per held lock).
 */
const COPIED_SLICE = 13;

/**
 * The key in bytes [start, end), or null when it is not 1-250 bytes of UTF-8 without whitespace
 * or control characters. `text`, when given, is `buf` decoded as latin1 (one char per byte, the
 * same offsets; the line splitter decodes each chunk once): a short ASCII key is then sliced from
 * it in JavaScript, about a fifth of the cost of a decode by Buffer per key.
 */
export function parseKey(buf: Buffer, start: number, end: number, text?: string): string | null {
  const len = end - start;
  if (len < 1 || len > MAX_KEY_BYTES) return null;
  let ascii = true;
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    if (b <= 0x20 || b === 0x7f) return null;
    if (b >= 0x80) ascii = false;
  }
  if (ascii) return text !== undefined && len < COPIED_SLICE ? text.slice(start, end) : buf.toString('latin1', start, end);
  const view = buf.subarray(start, end);
  if (!isUtf8(view)) return null;
  const key = view.toString('utf8');
  return NON_ASCII_FORBIDDEN.test(key) ? null : key;
}

/**
 * Decimal seconds ("5", "0.25", "30.000") in bytes [start, end), as milliseconds; NaN when
 * malformed. At most 12 integer digits (no float surprises), at most 9 fraction digits.
 */
export function parseDecimalSecondsMs(buf: Buffer, start: number, end: number): number {
  let i = start;
  let whole = 0;
  let digits = 0;
  for (; i < end; i++) {
    const b = buf[i] as number;
    if (b === DOT) break;
    if (b < ZERO || b > NINE || ++digits > 12) return Number.NaN;
    whole = whole * 10 + (b - ZERO);
  }
  if (digits === 0) return Number.NaN;
  let ms = whole * 1000;
  if (i < end) {
    i++; // the dot
    const fracStart = i;
    let frac = 0;
    let scale = 1;
    for (; i < end; i++) {
      const b = buf[i] as number;
      if (b < ZERO || b > NINE || i - fracStart >= 9) return Number.NaN;
      frac = frac * 10 + (b - ZERO);
      scale *= 10;
    }
    if (i === fracStart) return Number.NaN;
    ms += (frac * 1000) / scale;
  }
  return ms;
}

/** A non-negative decimal integer of at most 15 digits (exact in a double); NaN when malformed. */
export function parseUnsignedInt(buf: Buffer, start: number, end: number): number {
  const len = end - start;
  if (len < 1 || len > 15) return Number.NaN;
  let n = 0;
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    if (b < ZERO || b > NINE) return Number.NaN;
    n = n * 10 + (b - ZERO);
  }
  return n;
}

/** A u64 in decimal (1-20 digits, <= 2^64-1), exactly; null when malformed. */
export function parseU64(buf: Buffer, start: number, end: number): bigint | null {
  const len = end - start;
  if (len < 1 || len > 20) return null;
  if (len <= 15) {
    const n = parseUnsignedInt(buf, start, end);
    return Number.isNaN(n) ? null : BigInt(n);
  }
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    if (b < ZERO || b > NINE) return null;
  }
  const v = BigInt(buf.toString('latin1', start, end));
  return v > U64_MAX ? null : v;
}

/** Index of the next space at or after `from` (or `end` when none). */
export function nextSpace(buf: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) if (buf[i] === 0x20) return i;
  return end;
}
