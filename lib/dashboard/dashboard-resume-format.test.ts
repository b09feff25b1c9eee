import { describe, expect, it } from 'vitest';
import { carriedClaimsText } from './dashboard-format.ts';

describe('the failover timeline text for resumable session claims', () => {
  it('counts the claims carried over, resumed and expired, and those ended otherwise or still waiting', () => {
    expect(carriedClaimsText({ claimsCarried: 12, claimsResumed: 11, claimsExpired: 1 })).toBe('12 session claims carried over: 11 resumed, 1 expired');
    expect(carriedClaimsText({ claimsCarried: 1, claimsResumed: 0, claimsExpired: 0 })).toBe(
      '1 session claim carried over: 0 resumed, 0 expired, 1 still reconnecting',
    );
    expect(carriedClaimsText({ claimsCarried: 0, claimsResumed: 0, claimsExpired: 0 })).toBe('no session claims carried over');
    expect(carriedClaimsText({ claimsCarried: 5, claimsResumed: 2, claimsExpired: 1, claimsEnded: 1 })).toBe(
      '5 session claims carried over: 2 resumed, 1 expired, 1 ended by an admin, 1 still reconnecting',
    );
  });

  it('says nothing for an entry that has no counts (a split brain)', () => {
    expect(carriedClaimsText({})).toBeNull();
  });
});
