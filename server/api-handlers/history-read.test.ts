import { describe, expect, it } from 'vitest';
import type { ApiError, LockHistory, StatsHistory } from '../../lib/ops-api/api-types.ts';
import { apiRequest, EPOCH_BASE, READ_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getLockHistory, getStatsHistory } from './history-read.ts';

describe('GET /api/v1/stats/history', () => {
  it('answers each range with its buckets and the merged figures of the range', async () => {
    const t = await testFacade();
    const first = t.hold('a');
    t.hold('a');
    t.clock.advance(250);
    t.engine.release('a', first.token);
    for (const [range, bucketMs, count] of [
      ['5m', 10_000, 30],
      ['1h', 10_000, 360],
      ['24h', 300_000, 288],
    ] as const) {
      const res = getStatsHistory(apiRequest(`/api/v1/stats/history?range=${range}`), t.daemon);
      expect(res.status).toBe(200);
      const body = (await res.json()) as StatsHistory;
      expect(body).toMatchObject({ range, bucketMs, asOf: EPOCH_BASE + t.clock.now() });
      expect(body.buckets).toHaveLength(count);
      expect(body.summary.grants).toBe(2);
      expect(body.summary.queueWait.waited).toBe(1);
      expect(body.summary.hold.count).toBe(1);
    }
  });

  it('defaults to 5 minutes', async () => {
    const t = await testFacade();
    const body = (await getStatsHistory(apiRequest('/api/v1/stats/history'), t.daemon).json()) as StatsHistory;
    expect(body.range).toBe('5m');
  });

  it('refuses an unknown range or field with 422 invalid-input naming it', async () => {
    const t = await testFacade();
    for (const query of ['?range=2h', '?rnage=1h']) {
      const res = getStatsHistory(apiRequest(`/api/v1/stats/history${query}`), t.daemon);
      expect(res.status).toBe(422);
      const body = (await res.json()) as ApiError;
      expect(body.error.code).toBe('invalid-input');
      expect(body.error.message).toMatch(/range|rnage/);
    }
  });

  it('needs the read token when reads are protected', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    expect(getStatsHistory(apiRequest('/api/v1/stats/history'), t.daemon).status).toBe(401);
    expect(getStatsHistory(apiRequest('/api/v1/stats/history', { headers: { authorization: `Bearer ${READ_TOKEN}` } }), t.daemon).status).toBe(200);
  });
});

describe('GET /api/v1/locks/{name}/history', () => {
  it("lists the lock's ended grants newest first with their percentiles, after the lock went idle", async () => {
    const t = await testFacade();
    const first = t.hold('jobs/nightly');
    const second = t.hold('jobs/nightly');
    t.clock.advance(40);
    t.engine.release('jobs/nightly', first.token);
    t.clock.advance(60);
    t.engine.forceRelease('jobs/nightly');
    const res = getLockHistory(apiRequest('/api/v1/locks/jobs%2Fnightly/history'), t.daemon, { name: 'jobs/nightly' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as LockHistory;
    expect(body.name).toBe('jobs/nightly');
    expect(body.grants.map((g) => [g.token, g.end, g.heldMs, g.queueWaitMs])).toEqual([
      [second.token.toString(), 'force-release', 60, 40],
      [first.token.toString(), 'release', 40, 0],
    ]);
    expect(body.hold).toEqual({ p50: 40, p99: 60 });
    expect(body.queueWait).toEqual({ p50: 0, p99: 40 });
  });

  it('answers an empty history for a lock this node has none for', async () => {
    const t = await testFacade();
    const body = (await getLockHistory(apiRequest('/api/v1/locks/zz/history'), t.daemon, { name: 'zz' }).json()) as LockHistory;
    expect(body).toMatchObject({ name: 'zz', grants: [], hold: { p50: null, p99: null } });
  });

  it('refuses a name the protocols would refuse with 422', async () => {
    const t = await testFacade();
    const res = getLockHistory(apiRequest('/api/v1/locks/a%20b/history'), t.daemon, { name: 'a b' });
    expect(res.status).toBe(422);
  });
});
