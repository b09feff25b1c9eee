import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
