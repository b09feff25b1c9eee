import { describe, expect, it } from 'vitest';
import { type FreezeInput, freezeRule } from './freeze-rule.ts';

const input = (over: Partial<FreezeInput> = {}): FreezeInput => ({
  now: 10_000,
  lastDecideAt: 9_975,
  peerTimeoutMs: 1_000,
  phase: 'active',
  leaseLapsed: false,
  reconfirmSince: null,
  ...over,
});

describe('freezeRule', () => {
  it('a decision on time with the grant window open changes nothing', () => {
    expect(freezeRule(input())).toEqual({ kind: 'none' });
    // A gap of exactly the peer timeout is not a freeze yet.
    expect(freezeRule(input({ lastDecideAt: 9_000 }))).toEqual({ kind: 'none' });
  });

  it('an active whose grant window passed without a freeze holds grants and asks its peers, once', () => {
    expect(freezeRule(input({ leaseLapsed: true, lastDecideAt: 9_600 }))).toEqual({ kind: 'hold-grants', since: 10_000, gapMs: 400 });
    expect(freezeRule(input({ leaseLapsed: true, reconfirmSince: 9_900 }))).toEqual({ kind: 'holding' });
  });

  it('a lapsed window counts only for a fully active node', () => {
    expect(freezeRule(input({ leaseLapsed: true, phase: 'standby' }))).toEqual({ kind: 'none' });
    expect(freezeRule(input({ leaseLapsed: true, phase: 'handing-off' }))).toEqual({ kind: 'none' });
  });

  it('a gap longer than the peer timeout is a freeze: an active steps out, a standby only listens again', () => {
    expect(freezeRule(input({ lastDecideAt: 8_999 }))).toEqual({ kind: 'frozen', frozenMs: 1_001, stepOut: true });
    expect(freezeRule(input({ lastDecideAt: 5_000, phase: 'handing-off' }))).toEqual({ kind: 'frozen', frozenMs: 5_000, stepOut: true });
    expect(freezeRule(input({ lastDecideAt: 5_000, phase: 'standby' }))).toEqual({ kind: 'frozen', frozenMs: 5_000, stepOut: false });
    // A freeze wins over a confirmation under way.
    expect(freezeRule(input({ lastDecideAt: 5_000, leaseLapsed: true, reconfirmSince: 4_000 }))).toEqual({ kind: 'frozen', frozenMs: 5_000, stepOut: true });
  });
});
