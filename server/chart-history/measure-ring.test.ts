import { describe, expect, it } from 'vitest';
import { RELATIVE_ERROR, binOf } from './log-histogram.ts';
import { MeasureRing } from './measure-ring.ts';

const DAY = 86_400_000;

/** Within the histogram's stated error of `want`. */
function expectNear(got: number | null | undefined, want: number): void {
  expect(got).toBeTypeOf('number');
  expect(Math.abs((got ?? 0) - want)).toBeLessThanOrEqual(want * RELATIVE_ERROR);
}
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % 300_000);

describe('MeasureRing', () => {
  it('keeps 24 hours at fixed memory: after 48 hours of records the histograms never outgrow the slots', () => {
    const ring = new MeasureRing(300_000, 288);
    const bound = 288 * 7;
    let most = 0;
    for (let t = T0; t < T0 + 2 * DAY; t += 60_000) {
      ring.recordGrant(t, binOf(t % 1_000));
      ring.recordHandover(t, 'release', binOf(0.5));
      ring.recordHandover(t, 'expiry', binOf(3));
      ring.recordHandover(t, 'disconnect', binOf(1));
      ring.recordHandover(t, 'force-release', binOf(1));
      ring.recordBlockedExpiry(t, binOf(2_000));
      ring.recordHold(t, binOf(10_000));
      most = Math.max(most, ring.histogramCount);
    }
    expect(most).toBeLessThanOrEqual(bound);
    expect(ring.histogramCount).toBe(bound);
    const buckets = ring.buckets(T0 + 2 * DAY - 1);
    expect(buckets).toHaveLength(288);
    // Only the last day is there: five records a bucket (one a minute), none older.
    expect(buckets.every((b) => b.grants === 5)).toBe(true);
    expect(buckets[0]?.start).toBe(T0 + DAY);
  });

  it('drops a record older than the ring instead of overwriting a newer bucket', () => {
    const ring = new MeasureRing(10_000, 360);
    ring.recordGrant(T0 + 3_600_000, binOf(0));
    ring.recordGrant(T0, binOf(0)); // the same slot, an hour older
    expect(ring.buckets(T0 + 3_600_000).at(-1)?.grants).toBe(1);
    expect(ring.summary(T0 + 3_600_000).grants).toBe(1);
  });

  it('reports queue wait of all grants and of those that queued, with the share that queued', () => {
    const ring = new MeasureRing(10_000, 360);
    for (const w of [0, 0, 0, 0, 0, 0, 200, 200, 400, 800]) ring.recordGrant(T0, binOf(w));
    const b = ring.buckets(T0).at(-1);
    expect(b?.queueWait).toMatchObject({ count: 10, p50: 0, waited: 4 });
    expectNear(b?.queueWait.waitedP50, 200);
    expectNear(b?.queueWait.waitedP99, 800);
  });

  it('shows an expiry by its blocked time and the other causes by their in-daemon handover', () => {
    const ring = new MeasureRing(10_000, 360);
    ring.recordHandover(T0, 'expiry', binOf(1));
    ring.recordBlockedExpiry(T0, binOf(4_000));
    ring.recordHandover(T0, 'release', binOf(0));
    const b = ring.buckets(T0).at(-1);
    expectNear(b?.byCause.expiry.p50, 1);
    expectNear(b?.blocked.expiry.p50, 4_000);
    expect(b?.blocked.release).toEqual({ count: 1, p50: 0, p99: 0 });
    expect(b?.handovers).toBe(2);
  });

  it('merges a range from the histograms, not from bucket figures', () => {
    const ring = new MeasureRing(10_000, 360);
    // 99 fast holds in one bucket and one slow hold in the next: the merged p50 is the fast one.
    for (let i = 0; i < 99; i++) ring.recordHold(T0, binOf(10));
    ring.recordHold(T0 + 10_000, binOf(60_000));
    const s = ring.summary(T0 + 10_000);
    expect(s.hold.count).toBe(100);
    expectNear(s.hold.p50, 10);
    expectNear(s.hold.p99, 10);
  });

  it('lists changed buckets after a version, plus the current one', () => {
    const ring = new MeasureRing(10_000, 360);
    ring.recordGrant(T0, binOf(0));
    const v = ring.version;
    ring.recordGrant(T0 + 20_000, binOf(0));
    expect(ring.changedSince(v, T0 + 30_000, 30).map((b) => b.start)).toEqual([T0 + 20_000, T0 + 30_000]);
  });

  it('rolls fine buckets up into the coarse ring once, and reads the coarse ring with the fine buckets not rolled up yet', () => {
    const fine = new MeasureRing(10_000, 360);
    const coarse = new MeasureRing(300_000, 288);
    fine.rollUpInto(coarse);
    const end = T0 + 26 * 3_600_000;
    let most = 0;
    for (let t = T0; t < end; t += 60_000) {
      fine.recordGrant(t, binOf(t % 2 === 0 ? 0 : 50));
      fine.recordHold(t, binOf(1_000));
      most = Math.max(most, fine.histogramCount + coarse.histogramCount);
    }
    const now = end - 1;
    // The last 24 hours, whatever part of them is still in the fine ring: one grant a minute.
    const day = coarse.buckets(now);
    expect(day).toHaveLength(288);
    expect(day.every((b) => b.grants === 5 && b.hold.count === 5)).toBe(true);
    expect(coarse.summary(now).grants).toBe(288 * 5);
    expect(fine.summary(now).grants).toBe(60);
    expectNear(coarse.summary(now).hold.p50, 1_000);
    expect(most).toBeLessThanOrEqual((360 + 288) * 7);
  });
});
