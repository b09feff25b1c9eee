import { describe, expect, it } from 'vitest';
import type { FailoverView, TransitionClients } from '../ops-api/api-types.ts';
import { claimFatesText, formatStall, handoffStatusText, stallText, transitionSummary } from './transition-format.ts';

const clients = (over: Partial<TransitionClients> = {}): TransitionClients => ({
  moved: 3,
  expired: 1,
  lost: 0,
  ended: 0,
  reconnecting: 0,
  requeued: 2,
  regranted: 2,
  longestStallMs: 5_200,
  stalls: 4,
  finishedAt: 1_700_000_000_000,
  ...over,
});

const entry = (over: Partial<TransitionClients> = {}): FailoverView => ({
  at: 1,
  from: 'a',
  to: 'b',
  gapMs: 6.3,
  cause: 'api-handoff',
  id: 'b/1',
  clients: clients(over),
});

describe('a transition in words', () => {
  it('puts the client stall first and names the gap as the time with no active node', () => {
    // The page used to say "gap 6.3 ms" alone while clients of one lock stalled 5.2 s.
    expect(transitionSummary(entry())).toBe(
      'longest client stall 5.2 s (no active node for 6.3 ms); 3 claims moved, 1 expired, 0 lost, 2 keyed requests re-sent (2 granted again)',
    );
    expect(transitionSummary({ at: 1, from: 'a', to: 'b', gapMs: 0, cause: 'split-brain' })).toBeNull();
  });

  it('says what is still awaited while the transition settles', () => {
    expect(claimFatesText(clients({ moved: 1, expired: 0, requeued: 0, reconnecting: 2, ended: 1 }))).toBe(
      '1 claim moved, 0 expired, 0 lost, 1 ended by an admin, 2 still reconnecting',
    );
    expect(stallText(clients({ finishedAt: null, longestStallMs: 40 }))).toBe('longest client stall so far 40.0 ms');
    expect(stallText(clients({ finishedAt: null, longestStallMs: null }))).toBe('no client stall measured yet');
    expect(stallText(clients({ longestStallMs: null }))).toBe('no client stalled');
  });

  it('ends the handoff status as finished with the figures', () => {
    expect(handoffStatusText('b', undefined)).toEqual({ text: "Graceful handoff to b: b took over; waiting for the clients' figures…", finished: false });
    expect(handoffStatusText('b', entry({ finishedAt: null, reconnecting: 1 })).finished).toBe(false);
    expect(handoffStatusText('b', entry())).toEqual({
      text: 'Graceful handoff to b finished: 3 claims moved, 1 expired, 0 lost, 2 keyed requests re-sent (2 granted again); longest client stall 5.2 s (no active node for 6.3 ms).',
      finished: true,
    });
  });

  it('reads stalls in the unit that fits', () => {
    expect([formatStall(0.5), formatStall(17.7), formatStall(5_200), formatStall(90_000)]).toEqual(['500 µs', '17.7 ms', '5.2 s', '1.5 min']);
  });
});
