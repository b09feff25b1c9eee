import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientKey } from './client-key.ts';
import { MAX_TRACKED_ADDRESSES, SIGN_IN_WINDOW_MS, SIGN_INS_PER_WINDOW, SignInLimiter } from './sign-in-limits.ts';

describe('SignInLimiter', () => {
  it('tracks at most MAX_TRACKED_ADDRESSES addresses, forgetting the oldest window first', () => {
    let now = 0;
    const limiter = new SignInLimiter(() => now);
    for (let i = 0; i < MAX_TRACKED_ADDRESSES + 100; i++) {
      now = i;
      expect(limiter.admit(`a${i}`)).toBeNull();
    }
    expect(limiter.trackedAddresses).toBe(MAX_TRACKED_ADDRESSES);
    // The newest address is still counted; a limited one stays limited while tracked.
    const last = `a${MAX_TRACKED_ADDRESSES + 99}`;
    for (let i = 1; i < SIGN_INS_PER_WINDOW; i++) expect(limiter.admit(last)).toBeNull();
    expect(limiter.admit(last)).not.toBeNull();
  });

  it('never admits more than SIGN_INS_PER_WINDOW attempts from one address in any window, whatever the timing', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('x', 'y'), fc.integer({ min: 0, max: 20_000 })), { maxLength: 200 }), (steps) => {
        let now = 0;
        const limiter = new SignInLimiter(() => now);
        const admitted: Record<string, number[]> = { x: [], y: [] };
        for (const [who, gap] of steps) {
          now += gap;
          if (limiter.admit(who) === null) (admitted[who] as number[]).push(now);
        }
        for (const times of Object.values(admitted)) {
          // Fixed windows: within any span shorter than a window, at most two windows' worth.
          for (let i = 0; i + 2 * SIGN_INS_PER_WINDOW < times.length; i++) {
            expect((times[i + 2 * SIGN_INS_PER_WINDOW] as number) - (times[i] as number)).toBeGreaterThanOrEqual(SIGN_IN_WINDOW_MS);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('clientKey', () => {
  it('counts an IPv4 address (mapped or not) as itself and an IPv6 address by its /64', () => {
    expect(clientKey('10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(clientKey('2001:0db8:0000:0001:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('limits a client that rotates addresses inside its /64', () => {
    const limiter = new SignInLimiter(() => 0);
    for (let i = 0; i < SIGN_INS_PER_WINDOW; i++) expect(limiter.admit(`2001:db8:0:1::${i.toString(16)}`)).toBeNull();
    expect(limiter.admit('2001:db8:0:1:ffff::1')).not.toBeNull();
    expect(limiter.admit('2001:db8:0:2::1')).toBeNull();
  });
});
