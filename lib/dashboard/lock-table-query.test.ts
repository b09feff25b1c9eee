import { describe, expect, it } from 'vitest';
import type { LockSummary } from '../ops-api/api-types.ts';
import { applyReceived, applySnapshot, type DashboardState } from './dashboard-state.ts';
import { delta, holder, lock, receivedDelta, snapshot } from './dashboard-fixtures.ts';
import { compareDecimal, filtersActive, type LockFilters, NO_FILTERS, nextSort, selectLockRows, selectTableView } from './lock-table-query.ts';

function stateWith(locks: LockSummary[], receivedAt = 0): DashboardState {
  return applySnapshot(snapshot({ locks }), receivedAt);
}

const search = (q: string): LockFilters => ({ ...NO_FILTERS, q });

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
    expect(names(selectLockRows(rows(), search('JOBS/'), { key: 'name', direction: 'asc' }, 0))).toEqual(['Jobs/Weekly', 'jobs/hourly', 'jobs/nightly']);
  });

  it('shows every lock for an empty search', () => {
    expect(selectLockRows(rows(), search('  '), { key: 'name', direction: 'asc' }, 0)).toHaveLength(4);
  });

  it('sorts tokens numerically, not as text', () => {
    expect(names(selectLockRows(rows(), NO_FILTERS, { key: 'token', direction: 'desc' }, 0))).toEqual([
      'jobs/hourly',
      'jobs/nightly',
      'Jobs/Weekly',
      'cache/warm',
    ]);
  });

  it('sorts by held for with unheld locks last in both directions', () => {
    expect(names(selectLockRows(rows(), NO_FILTERS, { key: 'heldFor', direction: 'desc' }, 0))).toEqual([
      'jobs/hourly',
      'Jobs/Weekly',
      'jobs/nightly',
      'cache/warm',
    ]);
    expect(names(selectLockRows(rows(), NO_FILTERS, { key: 'heldFor', direction: 'asc' }, 0))).toEqual([
      'jobs/nightly',
      'Jobs/Weekly',
      'jobs/hourly',
      'cache/warm',
    ]);
  });

  it('orders held for correctly across rows that arrived at different times', () => {
    const s0 = stateWith([lock('old', holder('1', { heldForMs: 10_000 }))], 0);
    // 'new' arrives 20 s later, held 15 s: at any later moment 'old' has been held 5 s longer.
    const s1 = applyReceived(s0, [receivedDelta(delta({ upserts: [lock('new', holder('2', { heldForMs: 15_000 }))] }), 20_000)]);
    expect(s1 && names(selectLockRows(s1.locks, NO_FILTERS, { key: 'heldFor', direction: 'desc' }, 20_000))).toEqual(['old', 'new']);
  });

  it('sorts by queue length with name as the tie-break', () => {
    expect(names(selectLockRows(rows(), NO_FILTERS, { key: 'queue', direction: 'desc' }, 0))).toEqual([
      'cache/warm',
      'Jobs/Weekly',
      'jobs/nightly',
      'jobs/hourly',
    ]);
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
    const out = selectLockRows(state.locks, search('/9'), { key: 'token', direction: 'desc' }, 0);
    expect(performance.now() - started).toBeLessThan(200);
    expect(out[0]?.summary.name).toBe('lock/9999');
  });
});

describe('the table filters', () => {
  // Arrived at local time 1,000; the tests look at local time 3,000 (2 s later).
  const rows = () =>
    stateWith(
      [
        lock('keyed/short', holder('1', { protocol: 'keyed', leaseRemainingMs: 9_000, heldForMs: 1_000, client: '10.0.0.1:4000' }), 0),
        lock('keyed/long', holder('2', { protocol: 'keyed', leaseRemainingMs: 3_600_000, heldForMs: 600_000, client: '10.0.0.2:4000' }), 3),
        lock('session/held', holder('3', { protocol: 'session', leaseRemainingMs: 60_000, heldForMs: 119_000, clientName: 'billing-worker-7' }), 1),
        lock('queue/only', null, 2),
      ],
      1_000,
    ).locks;
  const names = (r: { summary: LockSummary }[]) => r.map((x) => x.summary.name);
  const pick = (f: Partial<LockFilters>) => names(selectLockRows(rows(), { ...NO_FILTERS, ...f }, { key: 'name', direction: 'asc' }, 3_000));

  it('searches the holder address and the holder identity as well as the name', () => {
    expect(pick({ q: '10.0.0.2' })).toEqual(['keyed/long']);
    expect(pick({ q: 'BILLING-worker' })).toEqual(['session/held']);
    expect(pick({ q: 'queue' })).toEqual(['queue/only']);
  });

  it('matches a lock by a waiter the server found for the same search, and not for another search', () => {
    const waiters = { q: 'Deploy-bot', names: new Set(['queue/only']) };
    const found = (q: string) => names(selectLockRows(rows(), search(q), { key: 'name', direction: 'asc' }, 3_000, undefined, waiters));
    expect(found('deploy-bot ')).toEqual(['queue/only']);
    expect(found('deploy-bo')).toEqual([]);
  });

  it('keeps the locks held over one protocol', () => {
    expect(pick({ proto: 'keyed' })).toEqual(['keyed/long', 'keyed/short']);
    expect(pick({ proto: 'session' })).toEqual(['session/held']);
  });

  it('keeps the locks somebody waits for', () => {
    expect(pick({ waiters: true })).toEqual(['keyed/long', 'queue/only', 'session/held']);
  });

  it('keeps the held locks whose lease ends within N seconds, counted at the time given', () => {
    // keyed/short: 9 s at arrival, 7 s two seconds later.
    expect(pick({ expiringWithinS: 10 })).toEqual(['keyed/short']);
    expect(pick({ expiringWithinS: 6 })).toEqual([]);
    expect(pick({ expiringWithinS: 7 })).toEqual(['keyed/short']);
  });

  it('keeps the locks held longer than N seconds, counted at the time given', () => {
    // session/held: 119 s at arrival, 121 s at 3,000.
    expect(pick({ heldLongerThanS: 120 })).toEqual(['keyed/long', 'session/held']);
    expect(pick({ heldLongerThanS: 121 })).toEqual(['keyed/long']);
    expect(pick({ heldLongerThanS: 0 })).toEqual(['keyed/long', 'keyed/short', 'session/held']);
  });

  it('combines filters: every one must hold', () => {
    expect(pick({ proto: 'keyed', waiters: true })).toEqual(['keyed/long']);
    expect(pick({ q: 'keyed', expiringWithinS: 10, waiters: true })).toEqual([]);
  });

  it('counts as active only when something narrows the table', () => {
    expect(filtersActive(NO_FILTERS)).toBe(false);
    expect(filtersActive({ ...NO_FILTERS, q: '   ' })).toBe(false);
    expect(filtersActive({ ...NO_FILTERS, heldLongerThanS: 0 })).toBe(true);
  });

  it('sorts by lease left, soonest first, unheld locks last in both directions', () => {
    const sorted = (direction: 'asc' | 'desc') => names(selectLockRows(rows(), NO_FILTERS, { key: 'leaseLeft', direction }, 3_000));
    expect(sorted('asc')).toEqual(['keyed/short', 'session/held', 'keyed/long', 'queue/only']);
    expect(sorted('desc')).toEqual(['keyed/long', 'session/held', 'keyed/short', 'queue/only']);
  });

  it('orders lease left by when each lease ends, across rows that arrived at different times', () => {
    const s0 = stateWith([lock('early', holder('1', { leaseRemainingMs: 10_000 }))], 0);
    // 'late' arrives 8 s later with 5 s left: it ends at 13 s, after 'early' (10 s).
    const s1 = applyReceived(s0, [receivedDelta(delta({ upserts: [lock('late', holder('2', { leaseRemainingMs: 5_000 }))] }), 8_000)]);
    expect(s1 && names(selectLockRows(s1.locks, NO_FILTERS, { key: 'leaseLeft', direction: 'asc' }, 9_000))).toEqual(['early', 'late']);
  });

  it('starts lease left ascending when its header is first pressed', () => {
    expect(nextSort({ key: 'name', direction: 'asc' }, 'leaseLeft')).toEqual({ key: 'leaseLeft', direction: 'asc' });
  });
});

describe('the table while the snapshot still pages in', () => {
  // The header had a, b, d (the first three by name, through 'd'); a page brought z and c2... in no order.
  const paging = () => applySnapshot(snapshot({ locks: [lock('a'), lock('b', holder('5')), lock('d')], pending: true, total: 8, firstByName: true }), 0);
  const names = (r: { summary: LockSummary }[]) => r.map((x) => x.summary.name);
  const byName = { key: 'name', direction: 'asc' } as const;

  it("shows, sorted by name, only the rows up to the last of the first locks by name: the table's first rows", () => {
    const s = applyReceived(paging(), [receivedDelta(delta({ upserts: [lock('c', holder('7'), 1), lock('x', null, 2)] }), 1)]) as DashboardState;
    const through = s.pagingThrough ?? undefined;
    expect(through).toBe('d');
    const view = selectTableView(s.locks, NO_FILTERS, byName, 0, { loaded: s.locks.size, total: s.snapshotTotal, through: s.pagingThrough });
    expect(names(view.rows)).toEqual(['a', 'b', 'c', 'd']);
    expect(view.loading).toEqual({ kind: 'first-by-name', loaded: 5, total: 8 });
    // A filter keeps the first matches among them (every lock named up to 'd' is known); x matches too but may not be next.
    const waited = selectTableView(s.locks, { ...NO_FILTERS, waiters: true }, byName, 0, { loaded: 5, total: 8, through: 'd' });
    expect(names(waited.rows)).toEqual(['c']);
  });

  it('shows every row so far in any other order, marked partial, and everything once complete', () => {
    const s = paging();
    const desc = selectTableView(s.locks, NO_FILTERS, { key: 'name', direction: 'desc' }, 0, { loaded: 3, total: 8, through: 'd' });
    expect(names(desc.rows)).toEqual(['d', 'b', 'a']);
    expect(desc.loading?.kind).toBe('partial');
    const unordered = selectTableView(s.locks, NO_FILTERS, byName, 0, { loaded: 3, total: 8, through: null });
    expect(unordered.loading?.kind).toBe('partial');
    const done = selectTableView(s.locks, NO_FILTERS, byName, 0, null);
    expect(done.loading).toBeNull();
    expect(names(done.rows)).toEqual(['a', 'b', 'd']);
  });
});
