import { describe, expect, it } from 'vitest';
import { GrantLog, RING_SIZE, exactPercentiles } from './grant-log.ts';

function grantAndRelease(log: GrantLog, lock: string, id: number, at: number, heldMs = 5, waitMs = 0): void {
  log.granted(lock, id, 'keyed', '127.0.0.1:1', null, BigInt(id), at, waitMs);
  log.ended(lock, id, at + heldMs, 'release');
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

  it('tracks at most its bound of locks, pushing out the one granted longest ago', () => {
    const log = new GrantLog(3);
    for (const [i, name] of ['a', 'b', 'c', 'a', 'd'].entries()) grantAndRelease(log, name, i + 1, i * 10);
    expect(log.lockCount).toBe(3);
    // 'b' was granted longest ago ('a' was granted again since): it is gone, the others stay.
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

  it('names how each grant ended, lists a kicked waiter without a token, and ends open grants at a failover', () => {
    const log = new GrantLog();
    log.granted('a', 1, 'keyed', 'k', null, 1n, 0, 0);
    log.ended('a', 1, 10, 'expiry', 2);
    log.granted('a', 2, 'session', 's', 'worker-7', 2n, 10, 10);
    log.ended('a', 2, 30, 'close');
    log.granted('a', 3, 'keyed', 'k', null, 3n, 30, 0);
    log.ended('a', 3, 35, 'force-release');
    log.kicked('a', 4, 'keyed', 'k2', 36, 6);
    log.granted('a', 5, 'keyed', 'k', null, 5n, 40, 0);
    log.failover(50);
    const grants = log.history('a', 0).grants;
    expect(grants.map((g) => g.end)).toEqual(['failover', 'kick', 'force-release', 'close', 'expiry']);
    expect(grants[1]).toMatchObject({ claimId: '4', token: null, grantedAt: null, heldMs: null, queueWaitMs: 6, client: 'k2' });
    expect(grants[3]).toMatchObject({ clientName: 'worker-7', heldMs: 20, queueWaitMs: 10 });
  });

  it('ignores the end of a grant it never saw begin (the daemon started after it)', () => {
    const log = new GrantLog();
    log.ended('a', 9, 10, 'release');
    grantAndRelease(log, 'b', 1, 0);
    log.ended('b', 9, 10, 'release');
    expect(log.history('a', 0).grants).toEqual([]);
    expect(log.history('b', 0).grants).toHaveLength(1);
  });

  it('remembers the expired holder only until the next grant', () => {
    const log = new GrantLog();
    log.granted('a', 1, 'keyed', 'k', null, 1n, 0, 0);
    log.ended('a', 1, 100, 'expiry', 0);
    expect(log.expiredLastAlive('a')).toBe(0);
    log.granted('a', 2, 'keyed', 'k', null, 2n, 100, 100);
    expect(log.expiredLastAlive('a')).toBeNaN();
  });

  it('gives exact nearest-rank percentiles of the listed grants', () => {
    expect(exactPercentiles([5, 1, 4, 2, 3])).toEqual({ p50: 3, p99: 5 });
    expect(exactPercentiles([])).toEqual({ p50: null, p99: null });
  });
});
