import { describe, expect, it } from 'vitest';
import { knownError } from './admin-result.ts';

describe('knownError', () => {
  it('keeps a known error name and maps anything else to internal', () => {
    expect(knownError('server-going-away')).toBe('server-going-away');
    expect(knownError('not-a-name')).toBe('internal');
    expect(knownError('toString')).toBe('internal');
  });
});
