import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { LockSummary } from '../ops-api/api-types.ts';
import { bucket, cluster, delta, feedItem, holder, lock, receivedDelta, receivedPage, snapshot, stats, T0 } from './dashboard-fixtures.ts';
import {
  applyReceived,
  applySnapshot,
  type Received,
  elapsedSince,
  FEED_ADMIN_LIMIT,
  FEED_LIMIT,
  heldForAt,
  leaseRemainingAt,
  mergeHistory,
  remainingUntil,
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
    expect(applyReceived(undefined, [receivedDelta(delta({ upserts: [lock('a')] }), 0)])).toBeUndefined();
  });

  it('replaces upserted locks by name and deletes removed ones', () => {
    const s0 = stateWith([lock('a', holder('1')), lock('b')]);
    const s1 = applyReceived(s0, [receivedDelta(delta({ upserts: [lock('a', holder('7'), 2), lock('c')], removed: ['b'] }), 10)]);
    expect([...(s1?.locks.keys() ?? [])].sort()).toEqual(['a', 'c']);
    expect(s1?.locks.get('a')?.summary.holder?.token).toBe('7');
    expect(s1?.locks.get('a')?.summary.queueLength).toBe(2);
    expect(s1?.locks.get('a')?.receivedAt).toBe(10);
  });

  it('keeps the same locks map when no lock changed, so the table need not re-sort', () => {
    const s0 = stateWith([lock('a')]);
    const s1 = applyReceived(s0, [receivedDelta(delta(), 10)]);
    expect(s1?.locks).toBe(s0.locks);
  });

  it('does not change the previous state', () => {
    const s0 = stateWith([lock('a')]);
    applyReceived(s0, [receivedDelta(delta({ removed: ['a'] }), 10)]);
    expect(s0.locks.has('a')).toBe(true);
  });

  it('replaces stats always and the cluster only when present', () => {
    const s0 = stateWith([]);
    const s1 = applyReceived(s0, [receivedDelta(delta({ stats: stats({ held: 3 }) }), 1)]);
    expect(s1?.stats.held).toBe(3);
    expect(s1?.cluster).toBe(s0.cluster);
    const s2 = applyReceived(s1, [receivedDelta(delta({ cluster: cluster({ self: 'n2' }) }), 2)]);
    expect(s2?.cluster.self).toBe('n2');
  });

  it('keeps when the cluster view arrived: a delta without one leaves the time, one with it (or a snapshot) moves it', () => {
    const s0 = applySnapshot(snapshot(), 5);
    expect(s0.clusterReceivedAt).toBe(5);
    const s1 = applyReceived(s0, [receivedDelta(delta({ cluster: cluster({ self: 'n2' }) }), 7), receivedDelta(delta({ stats: stats({ held: 1 }) }), 9)]);
    expect(s1?.receivedAt).toBe(9);
    expect(s1?.clusterReceivedAt).toBe(7);
    expect(applyReceived(s1, [receivedDelta(delta({}), 12)])?.clusterReceivedAt).toBe(7);
  });

  it('replaces history buckets by start and keeps them in order', () => {
    const s0 = applySnapshot(snapshot({ history: [bucket(T0 - 10_000, { grants: 1 }), bucket(T0, { grants: 2 })] }), 0);
    const s1 = applyReceived(s0, [receivedDelta(delta({ history: [bucket(T0, { grants: 5 }), bucket(T0 + 10_000, { grants: 1 })] }), 1)]);
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
    const s1 = applyReceived(s0, [receivedDelta(delta({ feed: [...more, feedItem(201)] }), 1)]);
    expect(s1?.feed).toHaveLength(FEED_LIMIT);
    expect(s1?.feed[0]?.seq).toBe(2);
    expect(s1?.feed[FEED_LIMIT - 1]?.seq).toBe(201);
  });

  it('keeps the newest 100 admin items however much churn came after them', () => {
    const admins = Array.from({ length: 120 }, (_, i) => feedItem(i + 1, 'admin'));
    const churn = Array.from({ length: 1_000 }, (_, i) => feedItem(i + 121, i % 2 === 0 ? 'grant' : 'release'));
    const s0 = applySnapshot(snapshot({ feed: admins }), 0);
    const s1 = applyReceived(s0, [receivedDelta(delta({ feed: churn }), 1)]);
    const seqs = s1?.feed.map((f) => f.seq) ?? [];
    expect(seqs).toHaveLength(FEED_ADMIN_LIMIT + FEED_LIMIT);
    expect(s1?.feed.slice(0, FEED_ADMIN_LIMIT).every((f) => f.kind === 'admin')).toBe(true);
    expect(seqs[0]).toBe(21);
    expect(seqs[FEED_ADMIN_LIMIT]).toBe(1_121 - FEED_LIMIT);
    expect(seqs.at(-1)).toBe(1_120);
    // Still ascending and each once: the feed reads newest first from the end.
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
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

describe('applying deltas as one batch (the page applies what came within a beat together)', () => {
  const names = ['a', 'b', 'c', 'd'];
  const arbDelta = fc.record({
    upserts: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }),
    removed: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 2 }),
    token: fc.integer({ min: 1, max: 1_000 }),
    feed: fc.integer({ min: 0, max: 3 }),
    withCluster: fc.boolean(),
    gap: fc.integer({ min: 0, max: 400 }),
  });

  it('gives the state that applying them one by one gives', () => {
    fc.assert(
      fc.property(fc.array(arbDelta, { minLength: 1, maxLength: 6 }), fc.boolean(), (specs, paging) => {
        const s0 = applySnapshot(snapshot({ locks: [lock('a'), lock('b', null, 2)], pending: paging }), 0);
        let at = 0;
        let seq = 10;
        const batch = specs.map((d, i) => {
          at += d.gap;
          const msg = delta({
            asOf: T0 + at,
            upserts: d.upserts.map((n) => lock(n, holder(String(d.token)), i)),
            removed: d.removed.filter((n) => !d.upserts.includes(n)),
            feed: Array.from({ length: d.feed }, () => feedItem(seq++)),
            history: [bucket(T0 + at)],
            cluster: d.withCluster ? cluster({ self: `n${i}` }) : null,
          });
          return receivedDelta(msg, at);
        });
        let sequential: DashboardState | undefined = s0;
        for (const item of batch) sequential = applyReceived(sequential, [item]);
        const batched = applyReceived(s0, batch);
        expect(batched).toEqual(sequential);
      }),
    );
  });

  it('keeps the Map when no delta touched a lock (readers compare identities)', () => {
    const s0 = stateWith([lock('a')]);
    const s1 = applyReceived(s0, [receivedDelta(delta({ feed: [feedItem(1)] }), 5), receivedDelta(delta({}), 6)]);
    expect(s1?.locks).toBe(s0.locks);
    expect(s1?.receivedAt).toBe(6);
  });

  it('is nothing before a snapshot, and no change for an empty batch', () => {
    expect(applyReceived(undefined, [receivedDelta(delta({}), 1)])).toBeUndefined();
    const s0 = stateWith([lock('a')]);
    expect(applyReceived(s0, [])).toBe(s0);
  });
});

describe('a snapshot whose table comes in pages', () => {
  it('knows the header had the first locks by name: complete up to the last of them until the last page', () => {
    const s0 = applySnapshot(snapshot({ locks: [lock('a'), lock('c'), lock('b')], pending: true, total: 6, firstByName: true }), 0);
    expect(s0.pagingThrough).toBe('c');
    const s1 = applyReceived(s0, [receivedPage({ locks: [lock('x')], last: false }, 1)]);
    expect(s1?.pagingThrough).toBe('c');
    const s2 = applyReceived(s1, [receivedPage({ locks: [lock('y'), lock('z')], last: true }, 2)]);
    expect(s2?.paging).toBeNull();
    expect(s2?.pagingThrough).toBeNull();
    expect([...(s2?.locks.keys() ?? [])]).toEqual(['a', 'c', 'b', 'x', 'y', 'z']);
  });

  it('has no complete prefix when the header was not by name (an older daemon) or nothing pages', () => {
    expect(applySnapshot(snapshot({ locks: [lock('a')], pending: true, total: 5 }), 0).pagingThrough).toBeNull();
    expect(applySnapshot(snapshot({ locks: [lock('a')], pending: false, firstByName: true }), 0).pagingThrough).toBeNull();
  });

  it('keeps a page from overwriting a lock a delta before it named, and lets a delta after it win', () => {
    const s0 = applySnapshot(snapshot({ locks: [lock('a')], pending: true, total: 3, firstByName: true }), 0);
    const batch: Received[] = [
      { kind: 'delta', msg: delta({ upserts: [lock('b', holder('9'))] }), receivedAt: 1 },
      { kind: 'locks', msg: { locks: [lock('b', holder('3')), lock('c', holder('4'))], last: false }, receivedAt: 2 },
      { kind: 'delta', msg: delta({ upserts: [lock('c', holder('8'))] }), receivedAt: 3 },
      { kind: 'locks', msg: { locks: [], last: true }, receivedAt: 4 },
    ];
    const s1 = applyReceived(s0, batch);
    expect(s1?.locks.get('b')?.summary.holder?.token).toBe('9');
    expect(s1?.locks.get('c')?.summary.holder?.token).toBe('8');
    expect(s1?.paging).toBeNull();
  });

  it('gives for deltas and pages in one batch the state that applying them one by one gives', () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    const arbItem = fc.oneof(
      fc.record({
        kind: fc.constant('delta' as const),
        upserts: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }),
        removed: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 2 }),
        token: fc.integer({ min: 1, max: 1_000 }),
      }),
      fc.record({
        kind: fc.constant('locks' as const),
        names: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }),
        token: fc.integer({ min: 1, max: 1_000 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(arbItem, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 8 }), (specs, lastAt) => {
        const s0 = applySnapshot(snapshot({ locks: [lock('a'), lock('b', null, 2)], pending: true, total: 5, firstByName: true }), 0);
        const batch: Received[] = specs.map((d, i): Received => {
          if (d.kind === 'locks')
            return { kind: 'locks', msg: { locks: d.names.map((n) => lock(n, holder(String(d.token)))), last: i === lastAt }, receivedAt: i + 1 };
          return {
            kind: 'delta',
            msg: delta({
              asOf: T0 + i,
              upserts: d.upserts.map((n) => lock(n, holder(String(d.token)))),
              removed: d.removed.filter((n) => !d.upserts.includes(n)),
            }),
            receivedAt: i + 1,
          };
        });
        let sequential: DashboardState | undefined = s0;
        for (const item of batch) sequential = applyReceived(sequential, [item]);
        expect(applyReceived(s0, batch)).toEqual(sequential);
      }),
    );
  });

  it('does not change a complete table for a stray page', () => {
    const s0 = stateWith([lock('a')]);
    expect(applyReceived(s0, [receivedPage({ locks: [lock('b')], last: false }, 1)])).toBe(s0);
  });
});
