import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HandoverCause } from '../../lib/engine/claim.ts';
import { HANDOVER_CAUSES } from '../../lib/ops-api/api-types.ts';
import { BUCKET_COUNT, BUCKET_MS, HISTORY_MS, LatencyHistory, MAX_MS, MIN_MS, RELATIVE_ERROR, bucketStart } from './latency-history.ts';

const T0 = 1_700_000_000_000; // a multiple of BUCKET_MS

/** The ⌈q·n⌉-th smallest sample: the definition the histogram approximates. */
function exactPercentile(samples: number[], q: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
}

function expectClose(approx: number | null, exact: number | null): void {
  if (exact === null) {
    expect(approx).toBeNull();
  } else if (exact < MIN_MS) {
    expect(approx).toBe(0);
  } else {
    expect(approx).not.toBeNull();
    expect(Math.abs((approx as number) - exact)).toBeLessThanOrEqual(RELATIVE_ERROR * exact);
  }
}

/** Latencies spread evenly over the decades from 1 µs to 60 s, and some exact zeros. */
const latencyArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0) },
  {
    weight: 9,
    arbitrary: fc.double({ min: Math.log(MIN_MS), max: Math.log(MAX_MS), noNaN: true }).map((l) => Math.min(MAX_MS, Math.max(MIN_MS, Math.exp(l)))),
  },
);
const causeArb = fc.constantFrom<HandoverCause>(...HANDOVER_CAUSES);
const sampleArb = fc.record({ offsetMs: fc.integer({ min: 0, max: HISTORY_MS - BUCKET_MS - 1 }), cause: causeArb, latencyMs: latencyArb });

describe('LatencyHistory percentiles', () => {
  it('reports window percentiles within the stated relative error of the exact ones', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: BUCKET_MS - 1 }), (samples, phase) => {
        const now = T0 + phase;
        const h = new LatencyHistory();
        for (const s of samples) h.recordHandover(now - s.offsetMs, s.cause, s.latencyMs);
        const all = samples.map((s) => s.latencyMs);
        const summary = h.summary(now, HISTORY_MS);
        expect(summary.count).toBe(samples.length);
        expectClose(summary.p50, exactPercentile(all, 0.5));
        expectClose(summary.p95, exactPercentile(all, 0.95));
        expectClose(summary.p99, exactPercentile(all, 0.99));
      }),
      { numRuns: 200 },
    );
  });

  it('reports window percentiles per cause within the stated relative error, across buckets', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: BUCKET_MS - 1 }), (samples, phase) => {
        const now = T0 + phase;
        const h = new LatencyHistory();
        for (const s of samples) h.recordHandover(now - s.offsetMs, s.cause, s.latencyMs);
        const byCause = h.summaryByCause(now, HISTORY_MS);
        for (const cause of HANDOVER_CAUSES) {
          const mine = samples.filter((s) => s.cause === cause).map((s) => s.latencyMs);
          expect(byCause[cause].count).toBe(mine.length);
          expectClose(byCause[cause].p50, exactPercentile(mine, 0.5));
          expectClose(byCause[cause].p99, exactPercentile(mine, 0.99));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reports each bucket and cause within the stated relative error', () => {
    fc.assert(
      fc.property(
        fc.array(
          sampleArb.map((s) => ({ ...s, offsetMs: s.offsetMs % (3 * BUCKET_MS) })),
          { minLength: 1, maxLength: 300 },
        ),
        (samples) => {
          const now = T0 + 3 * BUCKET_MS - 1;
          const h = new LatencyHistory();
          for (const s of samples) h.recordHandover(now - s.offsetMs, s.cause, s.latencyMs);
          for (const bucket of h.buckets(now)) {
            const inBucket = samples.filter((s) => bucketStart(now - s.offsetMs) === bucket.start);
            expect(bucket.handovers).toBe(inBucket.length);
            expectClose(
              bucket.p50,
              exactPercentile(
                inBucket.map((s) => s.latencyMs),
                0.5,
              ),
            );
            expectClose(
              bucket.p99,
              exactPercentile(
                inBucket.map((s) => s.latencyMs),
                0.99,
              ),
            );
            for (const cause of HANDOVER_CAUSES) {
              const mine = inBucket.filter((s) => s.cause === cause).map((s) => s.latencyMs);
              expect(bucket.byCause[cause].count).toBe(mine.length);
              expectClose(bucket.byCause[cause].p50, exactPercentile(mine, 0.5));
              expectClose(bucket.byCause[cause].p99, exactPercentile(mine, 0.99));
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('reports zero-latency handovers (a release hands over in the same engine step) as 0', () => {
    const h = new LatencyHistory();
    h.recordHandover(T0, 'release', 0);
    expect(h.summary(T0, 60_000)).toEqual({ count: 1, p50: 0, p95: 0, p99: 0 });
  });

  it('reports latencies above 60 s as about 60 s', () => {
    const h = new LatencyHistory();
    h.recordHandover(T0, 'expiry', 3_600_000);
    const p50 = h.summary(T0, 60_000).p50 as number;
    expect(p50).toBeGreaterThanOrEqual(MAX_MS * (1 - RELATIVE_ERROR));
    expect(p50).toBeLessThanOrEqual(MAX_MS * (1 + 2 * RELATIVE_ERROR));
  });

  it('gives null percentiles and a zero count when there were no handovers', () => {
    const h = new LatencyHistory();
    h.recordGrant(T0);
    expect(h.summary(T0, 60_000)).toEqual({ count: 0, p50: null, p95: null, p99: null });
  });
});

describe('LatencyHistory window', () => {
  it('returns 90 consecutive 10-second buckets, oldest first, ending with the one that holds now, empty ones included', () => {
    const h = new LatencyHistory();
    h.recordGrant(T0 + 5);
    const now = T0 + 12_345;
    const buckets = h.buckets(now);
    expect(buckets).toHaveLength(BUCKET_COUNT);
    expect(buckets.map((b) => b.start)).toEqual(Array.from({ length: BUCKET_COUNT }, (_, i) => T0 + 10_000 - (BUCKET_COUNT - 1 - i) * BUCKET_MS));
    expect(buckets.at(-2)).toMatchObject({ start: T0, grants: 1 });
    expect(buckets.at(-1)).toEqual({
      start: T0 + 10_000,
      grants: 0,
      handovers: 0,
      p50: null,
      p99: null,
      byCause: Object.fromEntries(HANDOVER_CAUSES.map((c) => [c, { count: 0, p50: null, p99: null }])),
    });
  });

  it('lets a bucket fall out of the window once it is 15 minutes old', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 * HISTORY_MS }), fc.integer({ min: 0, max: BUCKET_MS - 1 }), (delay, phase) => {
        const h = new LatencyHistory();
        const at = T0 + phase;
        h.recordGrant(at);
        h.recordHandover(at, 'release', 1);
        const now = at + delay;
        const kept = bucketStart(now) - bucketStart(at) < HISTORY_MS;
        const buckets = h.buckets(now);
        expect(buckets.reduce((n, b) => n + b.grants, 0)).toBe(kept ? 1 : 0);
        expect(h.summary(now, HISTORY_MS).count).toBe(kept ? 1 : 0);
      }),
      { numRuns: 300 },
    );
  });

  it('reuses a slot for a newer bucket and drops records too late for it', () => {
    const h = new LatencyHistory();
    h.recordGrant(T0);
    h.recordGrant(T0 + HISTORY_MS); // same slot, 15 minutes on: the old bucket is gone
    h.recordGrant(T0 + 1); // late: the slot now holds a newer bucket
    const buckets = h.buckets(T0 + HISTORY_MS);
    expect(buckets.reduce((n, b) => n + b.grants, 0)).toBe(1);
    expect(buckets.at(-1)).toMatchObject({ start: T0 + HISTORY_MS, grants: 1 });
  });

  it('summarises only the buckets that overlap the asked window', () => {
    const h = new LatencyHistory();
    const now = T0 + 100_000 + 2_000;
    h.recordHandover(now, 'release', 1); // current bucket
    h.recordHandover(now - 60_000, 'release', 2); // bucket start T0+40,000: overlaps the last 60 s
    h.recordHandover(now - 75_000, 'release', 4); // bucket start T0+20,000: ends before the window starts
    expect(h.summary(now, 60_000).count).toBe(2);
    expect(h.summary(now, 90_000).count).toBe(3);
  });

  it('ignores records at a time that is not a finite number', () => {
    const h = new LatencyHistory();
    h.recordGrant(Number.NaN);
    h.recordHandover(Number.POSITIVE_INFINITY, 'release', 1);
    expect(h.version).toBe(0);
  });
});

describe('LatencyHistory versions', () => {
  it('returns the buckets changed since a version, plus the current one even when empty', () => {
    const h = new LatencyHistory();
    h.recordGrant(T0);
    h.recordGrant(T0 + 10_000);
    const seen = h.version;
    h.recordHandover(T0 + 1, 'disconnect', 3);
    const now = T0 + 30_000;
    expect(h.changedSince(seen, now).map((b) => b.start)).toEqual([T0, T0 + 30_000]);
    expect(h.changedSince(h.version, now).map((b) => b.start)).toEqual([T0 + 30_000]);
    expect(h.changedSince(0, now).map((b) => b.start)).toEqual([T0, T0 + 10_000, T0 + 30_000]);
  });

  it('counts grants and handovers per bucket', () => {
    const h = new LatencyHistory();
    for (let i = 0; i < 5; i++) h.recordGrant(T0 + i);
    h.recordHandover(T0, 'force-release', 2);
    h.recordHandover(T0, 'force-release', 2);
    const bucket = h.buckets(T0).at(-1);
    expect(bucket).toMatchObject({ grants: 5, handovers: 2, byCause: { 'force-release': { count: 2 } } });
    expect(bucket?.p50).toBeCloseTo(2, 0);
  });
});
