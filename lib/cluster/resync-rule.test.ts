import { describe, expect, it } from 'vitest';
import { type ResyncInput, resyncRule, SYNC_RETRY_MS } from './resync-rule.ts';

const input = (over: Partial<ResyncInput> = {}): ResyncInput => ({
  selfId: 'b',
  phase: 'syncing',
  link: { receiving: false },
  followedStatus: { phase: 'active', lags: {} },
  now: 10_000,
  syncRequestedAt: 10_000 - SYNC_RETRY_MS - 1,
  ...over,
});

describe('resyncRule', () => {
  it('a syncing node whose request went unanswered asks again after 500 ms, not before', () => {
    expect(resyncRule(input())).toEqual({ kind: 'request', why: 'unanswered' });
    expect(resyncRule(input({ syncRequestedAt: 9_500 }))).toEqual({ kind: 'none' });
    expect(resyncRule(input({ syncRequestedAt: Number.NEGATIVE_INFINITY }))).toEqual({ kind: 'request', why: 'unanswered' });
  });

  it('a standby re-syncs when its active stops listing it among its lags, after 1 s', () => {
    const dropped = input({ phase: 'standby', followedStatus: { phase: 'active', lags: { c: {} } } });
    expect(resyncRule({ ...dropped, syncRequestedAt: 8_999 })).toEqual({ kind: 'request', why: 'dropped' });
    expect(resyncRule({ ...dropped, syncRequestedAt: 9_000 })).toEqual({ kind: 'none' });
  });

  it('a standby its active still streams to, or whose active says nothing of its streams, stays', () => {
    const old = 0;
    expect(resyncRule(input({ phase: 'standby', followedStatus: { phase: 'active', lags: { b: {} } }, syncRequestedAt: old }))).toEqual({ kind: 'none' });
    expect(resyncRule(input({ phase: 'standby', followedStatus: { phase: 'active' }, syncRequestedAt: old }))).toEqual({ kind: 'none' });
    // Only an active's lags say whom it streams to (one handing off may have stopped).
    expect(resyncRule(input({ phase: 'standby', followedStatus: { phase: 'handing-off', lags: {} }, syncRequestedAt: old }))).toEqual({ kind: 'none' });
    expect(resyncRule(input({ phase: 'standby', followedStatus: null, syncRequestedAt: old }))).toEqual({ kind: 'none' });
  });

  it('never while a snapshot is arriving, without a link, or in another phase', () => {
    expect(resyncRule(input({ link: { receiving: true } }))).toEqual({ kind: 'none' });
    expect(resyncRule(input({ link: null }))).toEqual({ kind: 'none' });
    for (const phase of ['discovering', 'promoting', 'active', 'handing-off'] as const) expect(resyncRule(input({ phase }))).toEqual({ kind: 'none' });
  });
});
