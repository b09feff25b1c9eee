import { describe, expect, it } from 'vitest';
import { type MisconfigInput, misconfigRule } from './misconfig-rule.ts';

const input = (over: Partial<MisconfigInput> = {}): MisconfigInput => ({
  decision: { kind: 'promote' },
  alivePeers: 0,
  refusal: { peer: 'b', reason: 'auth' },
  lastActiveInstance: null,
  now: 50_000,
  refusalNotedAt: Number.NEGATIVE_INFINITY,
  ...over,
});

describe('misconfigRule', () => {
  it('a node refused (or refusing), hearing nobody and never in the running cluster does not promote, and says why', () => {
    expect(misconfigRule(input())).toEqual({ kind: 'refuse', peer: 'b', reason: 'auth', log: true });
    expect(misconfigRule(input({ refusal: { peer: 'c', reason: 'duplicate' } }))).toEqual({ kind: 'refuse', peer: 'c', reason: 'duplicate', log: true });
  });

  it('says why at most once per 10 s', () => {
    expect(misconfigRule(input({ refusalNotedAt: 45_000 }))).toEqual({ kind: 'refuse', peer: 'b', reason: 'auth', log: false });
    expect(misconfigRule(input({ refusalNotedAt: 40_000 }))).toEqual({ kind: 'refuse', peer: 'b', reason: 'auth', log: false });
    expect(misconfigRule(input({ refusalNotedAt: 39_999 }))).toEqual({ kind: 'refuse', peer: 'b', reason: 'auth', log: true });
  });

  it('with no recent refusal, a peer heard, or an active followed in this run, the decision goes ahead', () => {
    expect(misconfigRule(input({ refusal: null }))).toEqual({ kind: 'go-on' });
    expect(misconfigRule(input({ alivePeers: 1 }))).toEqual({ kind: 'go-on' });
    // A standby that followed an active may be refusing a misconfigured newcomer while the real active died.
    expect(misconfigRule(input({ lastActiveInstance: 'i-a' }))).toEqual({ kind: 'go-on' });
  });

  it('only a promotion is held back', () => {
    expect(misconfigRule(input({ decision: { kind: 'stay' } }))).toEqual({ kind: 'go-on' });
    expect(misconfigRule(input({ decision: { kind: 'follow', id: 'b' } }))).toEqual({ kind: 'go-on' });
  });
});
