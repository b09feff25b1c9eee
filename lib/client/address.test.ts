import { describe, it, expect } from 'vitest';
import { normalizeAddresses } from './address.ts';

describe('addresses', () => {
  it('normalizes a mixed list and refuses an empty one', () => {
    expect(normalizeAddresses(['a:1', { host: 'b', port: 2 }, 'c'], 7070)).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
      { host: 'c', port: 7070 },
    ]);
    expect(() => normalizeAddresses([], 7070)).toThrow(expect.objectContaining({ code: 'bad-usage' }));
    expect(() => normalizeAddresses(['a:x'], 7070)).toThrow(expect.objectContaining({ code: 'bad-usage' }));
  });
});
