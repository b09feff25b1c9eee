import { describe, expect, it } from 'vitest';
import { type SplitBrainInput, splitBrainRule } from './split-brain-rule.ts';

const input = (over: Partial<SplitBrainInput> = {}): SplitBrainInput => ({
  self: { id: 'a', priority: 0, phase: 'active' },
  peer: { id: 'b', priority: 1, phase: 'active' },
  known: false,
  wallNow: 1_700_000_000_000,
  ...over,
});

describe('splitBrainRule', () => {
  it('an active that hears a lower-priority active records a split brain, with no gap', () => {
    expect(splitBrainRule(input())).toEqual({
      kind: 'record',
      failover: { at: 1_700_000_000_000, from: 'b', to: 'a', gapMs: 0, cause: 'split-brain' },
    });
  });

  it('records each rival once while it stays active', () => {
    expect(splitBrainRule(input({ known: true }))).toEqual({ kind: 'none' });
  });

  it('forgets a peer that is no rival: not active, or of higher priority (that one steps this node down)', () => {
    expect(splitBrainRule(input({ known: true, peer: { id: 'b', priority: 1, phase: 'syncing' } }))).toEqual({ kind: 'forget' });
    expect(splitBrainRule(input({ peer: { id: 'b', priority: 1, phase: 'handing-off' } }))).toEqual({ kind: 'forget' });
    expect(splitBrainRule(input({ self: { id: 'b', priority: 1, phase: 'active' }, peer: { id: 'a', priority: 0, phase: 'active' } }))).toEqual({
      kind: 'forget',
    });
  });

  it('a node that is not fully active records and forgets nothing', () => {
    expect(splitBrainRule(input({ self: { id: 'a', priority: 0, phase: 'handing-off' } }))).toEqual({ kind: 'none' });
    expect(splitBrainRule(input({ self: { id: 'a', priority: 0, phase: 'standby' }, known: true }))).toEqual({ kind: 'none' });
  });
});
