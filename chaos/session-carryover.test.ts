import { describe, expect, it } from 'vitest';
import { checkHistory } from './history-checker.ts';
import type { ClientEvent, FaultWindow } from './history.ts';
import { failover, fault, history, hold, lostSession, T0 } from './history-fixtures.ts';

/** s1 keeps its claim through 1000..1300 and releases at 2000; s2 loses its at 1400; k3 (keyed) is not counted. */
const around: ClientEvent[] = [...hold('s1', 'L', 10, 500, 2_000, 'session'), ...lostSession('s2', 'M', 11, 600, 1_400), ...hold('k3', 'N', 12, 700, 1_500)];

describe('session claims across handoffs (chaos checker property 7)', () => {
  it('counts, per fault that hit the active, the session holds that spanned it: carried over (same token, no abort) or lost', () => {
    const verdict = checkHistory(history({ clientEvents: around, faults: [fault('sigterm', 1_000, 1_300)] }));
    expect(verdict.counts.sessionCarryover).toEqual({ sigterm: { faults: 1, spanned: 2, carried: 1, lost: 1, other: 0 } });
    expect(verdict.counts.sessionLostToPlannedHandoff).toBe(1);
    // Off by default: the loss is a note, not a violation.
    expect(verdict.violations).toEqual([]);
    expect(verdict.notes).toContainEqual(expect.stringMatching(/session claim lost to a planned handoff .* M: session s2 \(token 11/));
  });

  it('fails a run on a claim lost to a planned handoff (SIGTERM, API handoff, priority return) with requireSessionCarryover', () => {
    for (const planned of [fault('sigterm', 1_000, 1_300), fault('api-handoff', 1_000, 1_010)]) {
      const verdict = checkHistory(history({ clientEvents: around, faults: [planned] }), { requireSessionCarryover: true });
      expect(
        verdict.violations.map((v) => v.property),
        planned.kind,
      ).toEqual(['session-carryover']);
      expect(verdict.violations[0]?.message).toMatch(/M: session s2 \(token 11, .*\) lost its claim .* to a (sigterm|api-handoff)/);
    }
    const returned = checkHistory(history({ clientEvents: around, failovers: [failover(1_000, 'priority-return')] }), { requireSessionCarryover: true });
    expect(returned.counts.sessionCarryover).toEqual({ 'priority-return': { faults: 1, spanned: 2, carried: 1, lost: 1, other: 0 } });
    expect(returned.violations.map((v) => v.property)).toEqual(['session-carryover']);
  });

  it('does not fail on a claim lost to a crash, a pause or a partition, even with the option; they are counted', () => {
    for (const unplanned of [fault('kill9', 1_000, 1_300), fault('pause', 1_000, 1_300), fault('partition', 1_000, 1_300)]) {
      const verdict = checkHistory(history({ clientEvents: around, faults: [unplanned] }), { requireSessionCarryover: true });
      expect(
        verdict.violations.filter((v) => v.property === 'session-carryover'),
        unplanned.kind,
      ).toEqual([]);
      expect(verdict.counts.sessionCarryover[unplanned.kind as 'kill9']).toEqual({ faults: 1, spanned: 2, carried: 1, lost: 1, other: 0 });
    }
  });

  it('does not count a fault that missed the active, a loss later than the fault end + a lease, or a hold released inside the window', () => {
    const standby: FaultWindow = { ...fault('sigterm', 1_000, 1_300), hitActive: false };
    expect(checkHistory(history({ clientEvents: around, faults: [standby] }), { requireSessionCarryover: true }).violations).toEqual([]);
    expect(checkHistory(history({ clientEvents: around, faults: [standby] })).counts.sessionCarryover).toEqual({});
    const other = [...lostSession('s4', 'L', 20, 500, 3_400), ...hold('s5', 'M', 21, 600, 1_100, 'session')];
    expect(
      checkHistory(history({ clientEvents: other, faults: [fault('sigterm', 1_000, 1_300)] }), { requireSessionCarryover: true }).counts.sessionCarryover,
    ).toEqual({ sigterm: { faults: 1, spanned: 2, carried: 0, lost: 0, other: 2 } });
    // Lost at 3300 = fault end + the lease: still the fault's.
    expect(
      checkHistory(history({ clientEvents: lostSession('s4', 'L', 20, 500, 3_300), faults: [fault('sigterm', 1_000, 1_300)] })).counts.sessionCarryover,
    ).toEqual({ sigterm: { faults: 1, spanned: 1, carried: 0, lost: 1, other: 0 } });
  });

  it('counts a claim the client reported resumed like any other carried one (the report is not needed)', () => {
    const resumed: ClientEvent[] = [...hold('s1', 'L', 10, 500, 2_000, 'session'), { kind: 'resumed', t: T0 + 1_010, client: 's1', lock: 'L', token: '10' }];
    expect(checkHistory(history({ clientEvents: resumed, faults: [fault('api-handoff', 1_000, 1_010)] }), { requireSessionCarryover: true })).toMatchObject({
      violations: [],
      counts: { sessionCarryover: { 'api-handoff': { faults: 1, spanned: 1, carried: 1, lost: 0, other: 0 } } },
    });
  });
});
