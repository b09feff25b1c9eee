import { describe, it, expect } from 'vitest';
import { checkWaitMs } from './session-wait.ts';

describe('session durations', () => {
  it('reads an absent wait, 0 and Infinity as forever', () => {
    expect(checkWaitMs(undefined)).toBe(Infinity);
    expect(checkWaitMs(0)).toBe(Infinity);
    expect(checkWaitMs(Infinity)).toBe(Infinity);
    expect(checkWaitMs(30 * 24 * 3600 * 1000)).toBe(Infinity); // more than a timer can hold
    expect(checkWaitMs(20)).toBe(20);
    expect(() => checkWaitMs(-1)).toThrow(expect.objectContaining({ code: 'bad-wait' }));
  });
});
