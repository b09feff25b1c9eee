// The one u64 text rule: what it takes and what it refuses, and that the predicate and the
// parser agree (the predicate skips the BigInt below 20 digits).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isU64Text, parseU64Text, U64_MAX } from './u64-text.ts';

describe('u64 as text', () => {
  it('takes 1 to 20 digits up to 2^64-1, leading zeros included', () => {
    expect(parseU64Text('0')).toBe(0n);
    expect(parseU64Text('007')).toBe(7n);
    expect(parseU64Text('18446744073709551615')).toBe(U64_MAX);
    expect(parseU64Text('00000000000000000001')).toBe(1n);
  });

  it('refuses empty, non-digits, signs, spaces, 21 digits and values above 2^64-1', () => {
    for (const bad of ['', ' 1', '1 ', '+1', '-1', '1.0', '1e3', '0x10', '１', '18446744073709551616', '99999999999999999999', '000000000000000000001']) {
      expect(parseU64Text(bad), bad).toBeNull();
      expect(isU64Text(bad), bad).toBe(false);
    }
    expect(isU64Text(7)).toBe(false);
    expect(isU64Text(null)).toBe(false);
  });

  it('the predicate and the parser agree on any string of digits', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{0,22}$/), (s) => {
        expect(isU64Text(s)).toBe(parseU64Text(s) !== null);
      }),
    );
  });
});
