import { describe, it, expect } from 'vitest';
import { BatonError } from '../errors.ts';
import { leaseToWireSeconds, sessionLeaseMs, waitToWireSeconds } from './duration-text.ts';

describe('keyed wire durations', () => {
  it('writes ms as exact decimal seconds', () => {
    expect(leaseToWireSeconds(250)).toBe('0.25');
    expect(leaseToWireSeconds(300)).toBe('0.3'); // not 0.30000000000000004
    expect(leaseToWireSeconds(1500)).toBe('1.5');
    expect(leaseToWireSeconds(30_000)).toBe('30');
    expect(leaseToWireSeconds(1)).toBe('0.001');
    expect(leaseToWireSeconds(0.5)).toBe('0.0005');
  });

  it('never turns a positive amount into "0", which would mean wait forever', () => {
    expect(waitToWireSeconds(0.0000001)).toBe('0.000001');
  });

  it('sends a wait of 0, undefined or Infinity as 0: wait forever', () => {
    expect(waitToWireSeconds(0)).toBe('0');
    expect(waitToWireSeconds(undefined)).toBe('0');
    expect(waitToWireSeconds(Infinity)).toBe('0');
  });

  it('refuses a lease <= 0 or not finite, and a negative wait, with the vocabulary names', () => {
    for (const lease of [0, -1, NaN, Infinity]) {
      expect(() => leaseToWireSeconds(lease)).toThrow(expect.objectContaining({ code: 'bad-lease' }));
    }
    expect(() => waitToWireSeconds(-5)).toThrow(BatonError);
    expect(() => waitToWireSeconds(-5)).toThrow(expect.objectContaining({ code: 'bad-wait' }));
  });
});

describe('session durations', () => {
  it('takes whole ms > 0 for the lease', () => {
    expect(sessionLeaseMs(1000)).toBe(1000);
    expect(() => sessionLeaseMs(0)).toThrow(expect.objectContaining({ code: 'bad-lease' }));
    expect(() => sessionLeaseMs(1.5)).toThrow(expect.objectContaining({ code: 'bad-lease' }));
  });
});
