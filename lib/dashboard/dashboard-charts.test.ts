import { describe, expect, it } from 'vitest';
import type { HistoryBucket } from '../ops-api/api-types.ts';
import { noHandoversByCause } from '../ops-api/api-types.ts';
import {
  causeLatency,
  chartWindow,
  durationTick,
  failoverDomain,
  failoverPoints,
  grantsPlot,
  grantsSeries,
  hasLatency,
  holdSeries,
  latencySeries,
  queueWaitSeries,
  timeTicks,
} from './dashboard-charts.ts';
import { bucket, T0 } from './dashboard-fixtures.ts';

describe('chart series', () => {
  const withCause = (start: number, cause: 'release' | 'expiry', count: number, p50: number, p99: number): HistoryBucket => {
    const b = bucket(start, { handovers: count, p50, p99 });
    b.byCause[cause] = { count, p50, p99 };
    return b;
  };

  it('covers the 30 ten-second buckets of 5 minutes ending at the current one, 360 for 1 h, 288 of 5 min for 24 h', () => {
    const w = chartWindow(T0 + 3_000);
    expect(w.to).toBe(T0);
    expect((w.to - w.from) / 10_000 + 1).toBe(30);
    const hour = chartWindow(T0 + 3_000, '1h');
    expect((hour.to - hour.from) / 10_000 + 1).toBe(360);
    const day = chartWindow(T0 + 3_000, '24h');
    expect(day.to % 300_000).toBe(0);
    expect((day.to - day.from) / 300_000 + 1).toBe(288);
  });

  it('charts the queue wait of the grants that queued, with the share that did', () => {
    const b = bucket(T0, { queueWait: { count: 8, p50: 0, p99: 90, waited: 2, waitedP50: 40, waitedP99: 90 } });
    expect(queueWaitSeries([b], T0)).toEqual([{ start: T0, p50: 40, p99: 90, waitedPct: 25 }]);
    expect(queueWaitSeries([bucket(T0)], T0)[0]?.waitedPct).toBeNull();
    expect(holdSeries([bucket(T0, { hold: { count: 1, p50: 5_000, p99: 5_000 } })], T0)[0]).toEqual({ start: T0, p50: 5_000, p99: 5_000 });
  });

  it('counts grants per second over 5-minute buckets in the 24 h range', () => {
    const day = grantsSeries([bucket(T0 - (T0 % 300_000), { grants: 600 })], T0, '24h');
    expect(day).toHaveLength(288);
    expect(day.at(-1)?.perSecond).toBe(2);
  });

  it('writes duration ticks short, with their unit', () => {
    expect([0, 0.25, 12, 1_500, 240_000, 7_200_000].map(durationTick)).toEqual(['0', '250 µs', '12 ms', '1.5 s', '4 min', '2 h']);
  });

  it('turns grants per bucket into grants per second and fills silent buckets with zero', () => {
    const series = grantsSeries([bucket(T0, { grants: 25 })], T0);
    expect(series).toHaveLength(30);
    expect(series[series.length - 1]).toEqual({ start: T0, perSecond: 2.5 });
    expect(series[0]?.perSecond).toBe(0);
  });

  it('keeps latency gaps as nulls and knows when there is a line to draw', () => {
    const series = latencySeries([bucket(T0 - 10_000), withCause(T0, 'release', 3, 1.5, 4)], T0);
    expect(series.map((p) => p.p50)).toEqual([null, 1.5]);
    expect(hasLatency(series)).toBe(true);
    expect(hasLatency(latencySeries([bucket(T0)], T0))).toBe(false);
  });

  it("draws one bar group per cause in a fixed order from the server's percentiles", () => {
    const byCause = noHandoversByCause();
    byCause.expiry = { count: 4, p50: 1.2, p95: 2, p99: 3.5 };
    const points = causeLatency(byCause);
    expect(points.map((c) => c.cause)).toEqual(['release', 'disconnect', 'expiry', 'force-release']);
    expect(points[2]).toEqual({ cause: 'expiry', count: 4, p50: 1.2, p99: 3.5 });
    expect(points[0]).toEqual({ cause: 'release', count: 0, p50: null, p99: null });
  });

  it('puts time ticks on whole minutes, a few per chart', () => {
    const { from, to } = chartWindow(T0 + 3_000);
    const ticks = timeTicks(from, to);
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks.length).toBeLessThanOrEqual(6);
    for (const t of ticks) {
      expect(t % 60_000).toBe(0);
      expect(t >= from && t <= to).toBe(true);
    }
    expect(timeTicks(T0 - 86_400_000 * 3, T0).length).toBeLessThanOrEqual(6);
  });

  it('labels failovers oldest first and widens the axis to include old ones', () => {
    const failovers = [
      { at: T0, from: 'n1', to: 'n2', gapMs: 800, cause: 'crash' as const },
      { at: T0 - 3_600_000, from: null, to: 'n1', gapMs: 0, cause: 'signal' as const },
    ];
    expect(failoverPoints(failovers).map((f) => f.label)).toEqual(['(none) → n1', 'n1 → n2']);
    expect(failoverDomain(failovers, T0)[0]).toBe(T0 - 3_600_000);
  });
});

describe('grantsPlot', () => {
  it('draws the bucket in progress over the part that has passed, apart from the finished ones, not as a drop', () => {
    const history = [bucket(T0 - 10_000, { grants: 100 }), bucket(T0, { grants: 20 })];
    const rows = grantsPlot(history, T0 + 2_000, '5m');
    const [finished, current, end] = rows.slice(-3);
    expect(finished).toMatchObject({ start: T0 - 10_000, perSecond: 10, partial: null, value: 10 });
    // 20 grants in the 2 s that passed: 10/s, not 2/s; the step of the last finished bucket closes at T0.
    expect(current).toMatchObject({ start: T0, perSecond: 10, partial: 10, value: 10, partialMs: 2_000 });
    expect(end).toMatchObject({ start: T0 + 10_000, perSecond: null, partial: 10, value: null });
  });

  it('counts at least a second of the bucket in progress', () => {
    const rows = grantsPlot([bucket(T0, { grants: 3 })], T0 + 100, '5m');
    expect(rows.at(-2)).toMatchObject({ partial: 3, partialMs: 100 });
  });
});
