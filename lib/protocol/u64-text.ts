// The one rule for a u64 written as text (fencing tokens, ceilings): 1 to 20 decimal digits,
// at most 2^64-1, leading zeros allowed. Used by the client's reply parser, the ops API, the
// peer messages, the snapshot entries and the ceiling files; wire-fields.ts applies the same
// rule to bytes on the server's hot path (without making a string).

export const U64_MAX = (1n << 64n) - 1n;

/** Whether `text` is 1 to 20 decimal digits (the value is not checked). */
function isDigits(text: string): boolean {
  if (text.length === 0 || text.length > 20) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The u64 that `text` writes, or null when it is not one. */
export function parseU64Text(text: string): bigint | null {
  if (!isDigits(text)) return null;
  const value = BigInt(text);
  return value <= U64_MAX ? value : null;
}

/** Whether `v` is a u64 as text; below 20 digits no BigInt is made (a snapshot checks millions). */
export function isU64Text(v: unknown): v is string {
  return typeof v === 'string' && isDigits(v) && (v.length < 20 || BigInt(v) <= U64_MAX);
}
