import { describe, expect, it } from 'vitest';
import type { LockSummary } from '../ops-api/api-types.ts';
import { bucket, cluster, delta, feedItem, holder, lock, snapshot, stats, T0 } from './dashboard-fixtures.ts';
import {
  applyDelta,
  applySnapshot,
  compareDecimal,
  elapsedSince,
  FEED_LIMIT,
  heldForAt,
  leaseRemainingAt,
  mergeHistory,
  nextSort,
  remainingUntil,
  selectLockRows,
  touchedLocks,
  type DashboardState,
} from './dashboard-state.ts';

function stateWith(locks: LockSummary[], receivedAt = 0): DashboardState {
  return applySnapshot(snapshot({ locks }), receivedAt);
}

describe('applying a snapshot', () => {
  it('replaces everything, keyed by lock name', () => {
    const s = applySnapshot(snapshot({ locks: [lock('a'), lock('b')], feed: [feedItem(1)] }), 5);
    expect(s.instanceId).toBe('inst-1');
    expect([...s.locks.keys()]).toEqual(['a', 'b']);
    expect(s.locks.get('a')?.receivedAt).toBe(5);
    expect(s.feed).toHaveLength(1);
  });
});

describe('applying a delta', () => {
  it('is ignored until a snapshot has arrived', () => {
    expect(applyDelta(undefined, delta({ upserts: [lock('a')] }), 0)).toBeUndefined();
  });

  it('replaces upserted locks by name and deletes removed ones', () => {
    const s0 = stateWith([lock('a', holder('1')), lock('b')]);
    const s1 = applyDelta(s0, delta({ upserts: [lock('a', holder('7'), 2), lock('c')], removed: ['b'] }), 10);
    expect([...(s1?.locks.keys() ?? [])].sort()).toEqual(['a', 'c']);
    expect(s1?.locks.get('a')?.summary.holder?.token).toBe('7');
    expect(s1?.locks.get('a')?.summary.queueLength).toBe(2);
    expect(s1?.locks.get('a')?.receivedAt).toBe(10);
  });

  it('keeps the same locks map when no lock changed, so the table need not re-sort', () => {
    const s0 = stateWith([lock('a')]);
    const s1 = applyDelta(s0, delta(), 10);
    expect(s1?.locks).toBe(s0.locks);
  });

  it('does not change the previous state', () => {
    const s0 = stateWith([lock('a')]);
    applyDelta(s0, delta({ removed: ['a'] }), 10);
    expect(s0.locks.has('a')).toBe(true);
  });

  it('replaces stats always and the cluster only when present', () => {
    const s0 = stateWith([]);
    const s1 = applyDelta(s0, delta({ stats: stats({ held: 3 }) }), 1);
    expect(s1?.stats.held).toBe(3);
    expect(s1?.cluster).toBe(s0.cluster);
    const s2 = applyDelta(s1, delta({ cluster: cluster({ self: 'n2' }) }), 2);
    expect(s2?.cluster.self).toBe('n2');
  });

  it('replaces history buckets by start and keeps them in order', () => {
    const s0 = applySnapshot(snapshot({ history: [bucket(T0 - 10_000, { grants: 1 }), bucket(T0, { grants: 2 })] }), 0);
    const s1 = applyDelta(s0, delta({ history: [bucket(T0, { grants: 5 }), bucket(T0 + 10_000, { grants: 1 })] }), 1);
    expect(s1?.history.map((b) => [b.start, b.grants])).toEqual([
      [T0 - 10_000, 1],
      [T0, 5],
      [T0 + 10_000, 1],
    ]);
  });

  it('appends feed items once each and keeps only the newest 200', () => {
    const first = Array.from({ length: 150 }, (_, i) => feedItem(i + 1));
    const s0 = applySnapshot(snapshot({ feed: first }), 0);
    const more = Array.from({ length: 100 }, (_, i) => feedItem(i + 101)); // 101..200 overlap 101..150
    const s1 = applyDelta(s0, delta({ feed: [...more, feedItem(201)] }), 1);
    expect(s1?.feed).toHaveLength(FEED_LIMIT);
    expect(s1?.feed[0]?.seq).toBe(2);
    expect(s1?.feed[FEED_LIMIT - 1]?.seq).toBe(201);
  });

  it('names every lock it upserted or removed', () => {
    expect([...touchedLocks(delta({ upserts: [lock('a')], removed: ['b'] }))].sort()).toEqual(['a', 'b']);
  });
});

describe('history window', () => {
  it('drops buckets older than 5 minutes (the stream sends no more)', () => {
    const old = bucket(T0 - 5 * 60_000 - 10_000);
    const edge = bucket(T0 - 5 * 60_000 + 10_000);
    expect(mergeHistory([old, edge], [], T0).map((b) => b.start)).toEqual([edge.start]);
  });
});

describe('lease countdown and hold time', () => {
  it('counts the lease down from when the message arrived', () => {
    const row = stateWith([lock('a', holder('1', { leaseRemainingMs: 12_345 }))], 1_000).locks.get('a');
    expect(row && leaseRemainingAt(row, 1_000)).toBe(12_345);
    expect(row && leaseRemainingAt(row, 3_000)).toBe(10_345);
  });

  it('never counts below zero', () => {
    const row = stateWith([lock('a', holder('1', { leaseRemainingMs: 500 }))], 0).locks.get('a');
    expect(row && leaseRemainingAt(row, 10_000)).toBe(0);
  });

  it('has no lease or hold time for a lock with only waiters', () => {
    const row = stateWith([lock('a', null, 3)]).locks.get('a');
    expect(row && leaseRemainingAt(row, 5)).toBeNull();
    expect(row && heldForAt(row, 5)).toBeNull();
  });

  it('counts hold time up from the holder view', () => {
    const row = stateWith([lock('a', holder('1', { heldForMs: 4_000 }))], 100).locks.get('a');
    expect(row && heldForAt(row, 1_100)).toBe(5_000);
  });

  it('counts waits up and deadlines down from the detail fetch', () => {
    expect(elapsedSince(2_000, 50, 550)).toBe(2_500);
    expect(remainingUntil(T0 + 10_000, T0, 50, 2_050)).toBe(8_000);
    expect(remainingUntil(T0 + 10_000, T0, 0, 60_000)).toBe(0);
  });
});

describe('filtering and sorting the lock table', () => {
  const rows = () =>
    stateWith([
      lock('jobs/nightly', holder('9', { heldForMs: 1_000 }), 1),
      lock('jobs/hourly', holder('10', { heldForMs: 5_000 }), 0),
      lock('cache/warm', null, 4),
      lock('Jobs/Weekly', holder('2', { heldForMs: 3_000 }), 2),
    ]).locks;
  const names = (r: { summary: LockSummary }[]) => r.map((x) => x.summary.name);

  it('keeps names containing the search text, ignoring case', () => {
    expect(names(selectLockRows(rows(), 'JOBS/', { key: 'name', direction: 'asc' }))).toEqual(['Jobs/Weekly', 'jobs/hourly', 'jobs/nightly']);
  });

  it('shows every lock for an empty search', () => {
    expect(selectLockRows(rows(), '  ', { key: 'name', direction: 'asc' })).toHaveLength(4);
  });

  it('sorts tokens numerically, not as text', () => {
    expect(names(selectLockRows(rows(), '', { key: 'token', direction: 'desc' }))).toEqual(['jobs/hourly', 'jobs/nightly', 'Jobs/Weekly', 'cache/warm']);
  });

  it('sorts by held for with unheld locks last in both directions', () => {
    expect(names(selectLockRows(rows(), '', { key: 'heldFor', direction: 'desc' }))).toEqual(['jobs/hourly', 'Jobs/Weekly', 'jobs/nightly', 'cache/warm']);
    expect(names(selectLockRows(rows(), '', { key: 'heldFor', direction: 'asc' }))).toEqual(['jobs/nightly', 'Jobs/Weekly', 'jobs/hourly', 'cache/warm']);
  });

  it('orders held for correctly across rows that arrived at different times', () => {
    const s0 = stateWith([lock('old', holder('1', { heldForMs: 10_000 }))], 0);
    // 'new' arrives 20 s later, held 15 s: at any later moment 'old' has been held 5 s longer.
    const s1 = applyDelta(s0, delta({ upserts: [lock('new', holder('2', { heldForMs: 15_000 }))] }), 20_000);
    expect(s1 && names(selectLockRows(s1.locks, '', { key: 'heldFor', direction: 'desc' }))).toEqual(['old', 'new']);
  });

  it('sorts by queue length with name as the tie-break', () => {
    expect(names(selectLockRows(rows(), '', { key: 'queue', direction: 'desc' }))).toEqual(['cache/warm', 'Jobs/Weekly', 'jobs/nightly', 'jobs/hourly']);
  });

  it('compares decimal tokens beyond 2^53 exactly', () => {
    expect(compareDecimal('18446744073709551615', '18446744073709551614')).toBeGreaterThan(0);
    expect(compareDecimal('9', '10')).toBeLessThan(0);
    expect(compareDecimal('42', '42')).toBe(0);
  });

  it('flips direction on the same column and starts names ascending, numbers descending', () => {
    expect(nextSort({ key: 'name', direction: 'asc' }, 'name')).toEqual({ key: 'name', direction: 'desc' });
    expect(nextSort({ key: 'name', direction: 'asc' }, 'token')).toEqual({ key: 'token', direction: 'desc' });
    expect(nextSort({ key: 'token', direction: 'desc' }, 'name')).toEqual({ key: 'name', direction: 'asc' });
  });

  it('filters and sorts 10,000 locks quickly', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => lock(`lock/${i}`, holder(String(i), { heldForMs: i }), i % 7));
    const state = stateWith(many);
    const started = performance.now();
    const out = selectLockRows(state.locks, '/9', { key: 'token', direction: 'desc' });
    expect(performance.now() - started).toBeLessThan(200);
    expect(out[0]?.summary.name).toBe('lock/9999');
  });
});
