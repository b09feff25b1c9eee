import { describe, expect, it } from 'vitest';
import type { EndedHolder } from '../../lib/engine/events.ts';
import { GrantLog, RING_SIZE, exactPercentiles } from './grant-log.ts';

/** An end event's holder (the engine's clock is the wall clock here). */
function holder(lock: string, id: number, grantedAt: number, at: number, more: Partial<EndedHolder> = {}): EndedHolder {
  return { at, lock, claimId: id, token: BigInt(id), protocol: 'keyed', client: '127.0.0.1:1', clientName: null, grantedAt, waitedMs: 0, ...more };
}

function grantAndRelease(log: GrantLog, lock: string, id: number, at: number, heldMs = 5, waitMs = 0): void {
  log.ended(holder(lock, id, at, at + heldMs, { waitedMs: waitMs }), at + heldMs, at, 'release');
}

describe('GrantLog', () => {
  it('keeps the last 50 ended grants of a lock, newest first', () => {
    const log = new GrantLog();
    for (let i = 1; i <= 120; i++) grantAndRelease(log, 'a', i, i * 100, i);
    const h = log.history('a', 0);
    expect(h.grants).toHaveLength(RING_SIZE);
    expect(h.grants.map((g) => Number(g.claimId))).toEqual(Array.from({ length: RING_SIZE }, (_, k) => 120 - k));
    expect(h.grants[0]).toMatchObject({ token: '120', grantedAt: 12_000, heldMs: 120, endedAt: 12_120, end: 'release' });
  });

  it('tracks at most its bound of locks, pushing out the one that ended a grant longest ago', () => {
    const log = new GrantLog(3);
    for (const [i, name] of ['a', 'b', 'c', 'a', 'd'].entries()) grantAndRelease(log, name, i + 1, i * 10);
    expect(log.lockCount).toBe(3);
    // 'b' ended a grant longest ago ('a' ended one again since): it is gone, the others stay.
    expect(log.history('b', 0).grants).toEqual([]);
    expect(log.history('a', 0).grants.map((g) => g.claimId)).toEqual(['4', '1']);
    expect(log.history('d', 0).grants).toHaveLength(1);
  });

  it("a pushed-out lock's ring is reused by the new one without its old entries", () => {
    const log = new GrantLog(1);
    for (let i = 1; i <= 60; i++) grantAndRelease(log, 'a', i, i);
    grantAndRelease(log, 'b', 100, 1_000);
    expect(log.history('b', 0).grants.map((g) => g.claimId)).toEqual(['100']);
  });

  it("keeps every lock's entries as its arena grows past the slots it started with", () => {
    const log = new GrantLog(100);
    // 3 ends on each of 40 locks, interleaved: the arena grows twice (16, 32, 64 slots) between them.
    for (let round = 0; round < 3; round++) for (let l = 0; l < 40; l++) grantAndRelease(log, `k${l}`, round * 1000 + l, round * 100 + l, l + 1);
    expect(log.lockCount).toBe(40);
    for (let l = 0; l < 40; l++) {
      const h = log.history(`k${l}`, 0);
      expect(h.grants.map((g) => Number(g.claimId))).toEqual([2000 + l, 1000 + l, l]);
      expect(h.grants.map((g) => g.token)).toEqual([String(2000 + l), String(1000 + l), String(l)]);
      expect(h.grants[0]).toMatchObject({ heldMs: l + 1, grantedAt: 200 + l, client: '127.0.0.1:1' });
    }
  });

  it('files ends in order across a full journal, and a read sees the ends not filed yet', () => {
    const log = new GrantLog(2);
    // 9,001 ends round a, b, c with room for two locks: more than two journals' worth, filed in
    // order, so the second-chance clock pushes out the same locks as filing each end at once would.
    for (let i = 0; i <= 9_000; i++) grantAndRelease(log, ['a', 'b', 'c'][i % 3] as string, i, i);
    expect(log.lockCount).toBe(2);
    const names = ['a', 'b', 'c'].filter((n) => log.history(n, 0).grants.length > 0);
    expect(names).toHaveLength(2);
    // The newest end (9,000, on 'a') is among them, read before any journal filled again.
    expect(log.history('a', 0).grants[0]?.claimId).toBe('9000');
    grantAndRelease(log, 'a', 9_001, 9_001);
    expect(
      log
        .history('a', 0)
        .grants.slice(0, 2)
        .map((g) => g.claimId),
    ).toEqual(['9001', '9000']);
  });

  it('names how each grant ended, lists a kicked waiter without a token, and lists the holders a reset ended as failover', () => {
    const log = new GrantLog();
    log.ended(holder('a', 1, 0, 10, { token: 1n, client: 'k' }), 10, 0, 'expiry', 2);
    log.ended(holder('a', 2, 10, 30, { protocol: 'session', client: 's', clientName: 'worker-7', waitedMs: 10 }), 30, 10, 'close');
    log.ended(holder('a', 3, 30, 35, { client: 'k' }), 35, 30, 'force-release');
    log.kicked('a', 4, 'keyed', 'k2', 36, 6);
    // The reset's holders carry engine times; the log maps their grant through the wall clock it is given.
    log.failover([holder('a', 5, 40, 50, { client: 'k' })], 50, (ms) => ms);
    const grants = log.history('a', 0).grants;
    expect(grants.map((g) => g.end)).toEqual(['failover', 'kick', 'force-release', 'close', 'expiry']);
    expect(grants[0]).toMatchObject({ claimId: '5', token: '5', grantedAt: 40, heldMs: 10, endedAt: 50 });
    expect(grants[1]).toMatchObject({ claimId: '4', token: null, grantedAt: null, heldMs: null, queueWaitMs: 6, client: 'k2' });
    expect(grants[3]).toMatchObject({ protocol: 'session', clientName: 'worker-7', heldMs: 20, queueWaitMs: 10 });
  });

  it('lists a grant still held as one row whatever the failovers, replaced by its real end, and leaves it out of the percentiles', () => {
    const log = new GrantLog();
    grantAndRelease(log, 'a', 1, 0, 40, 5);
    // Token 2 is granted at 100 and carried across four failovers (each reset lists it again).
    for (let f = 1; f <= 4; f++) log.failover([holder('a', 2, 100, 100 + f * 1_000, { waitedMs: 7 })], 100 + f * 1_000, (ms) => ms);
    log.failover([holder('a', 3, 200, 4_100)], 4_100, (ms) => ms);
    let h = log.history('a', 0);
    expect(h.grants.map((g) => [g.token, g.end])).toEqual([
      ['3', 'failover'],
      ['2', 'failover'],
      ['1', 'release'],
    ]);
    expect(h.grants[1]).toMatchObject({ endedAt: 4_100, heldMs: 4_000 });
    expect(h.hold).toEqual({ p50: 40, p99: 40 });
    // Its real end, replicated here after the last failover: the one row becomes that end.
    log.ended(holder('a', 2, 100, 9_100, { waitedMs: 7 }), 9_100, 100, 'release');
    h = log.history('a', 0);
    expect(h.grants.map((g) => [g.token, g.end])).toEqual([
      ['2', 'release'],
      ['3', 'failover'],
      ['1', 'release'],
    ]);
    expect(h.hold).toEqual({ p50: 40, p99: 9_000 });
  });

  it('keeps its count of failover rows right when the ring overwrites them', () => {
    const log = new GrantLog();
    for (let i = 1; i <= RING_SIZE; i++) log.failover([holder('a', i, i, i + 1)], i + 1, (ms) => ms);
    for (let i = 101; i <= 100 + RING_SIZE; i++) grantAndRelease(log, 'a', i, i * 10);
    log.failover([holder('a', 500, 5_000, 5_001)], 5_001, (ms) => ms);
    grantAndRelease(log, 'a', 1, 6_000); // token 1's failover row is gone already: nothing to replace
    log.ended(holder('a', 500, 5_000, 7_000), 7_000, 5_000, 'expiry', 5_000);
    const ends = log.history('a', 0).grants;
    expect(ends).toHaveLength(RING_SIZE);
    expect(ends.filter((g) => g.end === 'failover')).toEqual([]);
    expect(ends.slice(0, 2).map((g) => g.token)).toEqual(['500', '1']);
  });

  it('lists a kicked waiter also on a lock with no ended grant yet', () => {
    const log = new GrantLog();
    log.kicked('a', 9, 'keyed', 'k', 10, 1);
    expect(log.history('a', 0).grants).toEqual([expect.objectContaining({ claimId: '9', end: 'kick', queueWaitMs: 1 })]);
  });

  it('remembers the expired holder only until the next end', () => {
    const log = new GrantLog();
    log.ended(holder('a', 1, 0, 100), 100, 0, 'expiry', 0);
    expect(log.expiredLastAlive('a')).toBe(0);
    log.ended(holder('a', 2, 100, 150), 150, 100, 'release');
    expect(log.expiredLastAlive('a')).toBeNaN();
  });

  it('gives exact nearest-rank percentiles of the listed grants', () => {
    expect(exactPercentiles([5, 1, 4, 2, 3])).toEqual({ p50: 3, p99: 5 });
    expect(exactPercentiles([])).toEqual({ p50: null, p99: null });
  });
});
