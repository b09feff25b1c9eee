import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applySnapshot, type LockRow } from './dashboard-state.ts';
import { holder, lock, snapshot } from './dashboard-fixtures.ts';
import { lateSilenceMs, leaseAtRisk } from './lease-risk.ts';
import { NO_FILTERS, selectLockRows } from './lock-table-query.ts';

function rowOf(over: Parameters<typeof holder>[1], receivedAt = 0): LockRow {
  const state = applySnapshot(snapshot({ locks: [lock('l', holder('1', over))] }), receivedAt);
  const row = state.locks.get('l');
  if (row === undefined) throw new Error('no row');
  return row;
}

describe('which leases are at risk of ending', () => {
  it('leaves out a heartbeating session whose sliding lease was just renewed (issue 30)', () => {
    // A 5 s session lease reported 4.2 s left: a heartbeat came 0.8 s ago, as every lease/4.
    const row = rowOf({ protocol: 'session', sliding: true, leaseMs: 5_000, leaseRemainingMs: 4_200 });
    expect(leaseAtRisk(row, 0, 10_000)).toBe(false);
    const listed = selectLockRows(new Map([['l', row]]), { ...NO_FILTERS, expiringWithinS: 10 }, { key: 'name', direction: 'asc' }, 0);
    expect(listed).toEqual([]);
  });

  it('lists a keyed lease about to end', () => {
    const row = rowOf({ protocol: 'keyed', sliding: false, leaseMs: 30_000, leaseRemainingMs: 4_000 });
    expect(leaseAtRisk(row, 0, 10_000)).toBe(true);
    expect(leaseAtRisk(row, 0, 3_000)).toBe(false);
  });

  it('lists a session whose heartbeats are late, counted down locally', () => {
    const row = rowOf({ protocol: 'session', sliding: true, leaseMs: 10_000, leaseRemainingMs: 9_500 }, 1_000);
    // 6 s of silence later (local time 7,000): 3.5 s left, more than lateSilenceMs(10 s) = 5 s since a renewal.
    expect(leaseAtRisk(row, 1_000, 10_000)).toBe(false);
    expect(leaseAtRisk(row, 7_000, 10_000)).toBe(true);
  });

  it('lists a session claim waiting to be resumed, whose lease does not slide any more', () => {
    const row = rowOf({ protocol: 'session', sliding: true, leaseMs: 5_000, leaseRemainingMs: 4_900, reconnecting: true });
    expect(leaseAtRisk(row, 0, 10_000)).toBe(true);
  });

  it('never lists a lock without a holder, nor a lease ending after the window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 600_000 }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: 1_000, max: 86_400_000 }),
        (leaseMs, remaining, sliding, elapsed, within) => {
          const left = Math.min(remaining, leaseMs);
          const row = rowOf({ sliding, leaseMs, leaseRemainingMs: left });
          const atRisk = leaseAtRisk(row, elapsed, within);
          const shown = Math.max(0, left - elapsed);
          if (shown > within) expect(atRisk).toBe(false);
          // A fixed lease is at risk exactly when it ends within the window.
          if (!sliding) expect(atRisk).toBe(shown <= within);
          // A sliding lease is at risk only after a silence longer than two heartbeat gaps.
          if (sliding && atRisk) expect(leaseMs - shown).toBeGreaterThan(lateSilenceMs(leaseMs));
        },
      ),
    );
  });
});
