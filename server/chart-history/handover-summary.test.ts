// The overview's in-daemon handover figures (GET /api/v1/stats: the last minute, and per cause the
// last 15 minutes), read from the charts' fine ring since the separate 15-minute LatencyHistory
// was merged into it: one record per handover instead of two.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HandoverCause } from '../../lib/engine/claim.ts';
import { HANDOVER_CAUSES } from '../../lib/ops-api/api-types.ts';
import { BY_CAUSE_WINDOW_MS } from './history-recorder.ts';
import { MIN_MS, RELATIVE_ERROR, binOf } from './log-histogram.ts';
import { MeasureRing } from './measure-ring.ts';

const BUCKET_MS = 10_000;
const T0 = 1_700_000_000_000; // a multiple of BUCKET_MS

/** The daemon's fine ring: an hour of 10 s buckets. */
const fineRing = () => new MeasureRing(BUCKET_MS, 360);

/** The ⌈q·n⌉-th smallest sample: the definition the histogram approximates. */
function exactPercentile(samples: number[], q: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
}

function expectClose(approx: number | null, exact: number | null): void {
  if (exact === null) expect(approx).toBeNull();
  else if (exact < MIN_MS) expect(approx).toBe(0);
  else {
    expect(approx).not.toBeNull();
    expect(Math.abs((approx as number) - exact)).toBeLessThanOrEqual(RELATIVE_ERROR * exact);
  }
}

/** Latencies spread evenly over the decades from 1 µs to an hour, and some exact zeros. */
const latencyArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 9, arbitrary: fc.double({ min: Math.log(MIN_MS), max: Math.log(3_600_000), noNaN: true }).map((l) => Math.max(MIN_MS, Math.exp(l))) },
);
const causeArb = fc.constantFrom<HandoverCause>(...HANDOVER_CAUSES);
const sampleArb = fc.record({
  offsetMs: fc.integer({ min: 0, max: BY_CAUSE_WINDOW_MS - BUCKET_MS - 1 }),
  cause: causeArb,
  latencyMs: latencyArb,
});

describe('MeasureRing.handoverSummary and handoverByCause', () => {
  it('reports the window percentiles of all causes, and of each cause, within the stated relative error', () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: BUCKET_MS - 1 }), (samples, phase) => {
        const now = T0 + phase;
        const ring = fineRing();
        for (const s of samples) ring.recordHandover(now - s.offsetMs, s.cause, binOf(s.latencyMs));
        const all = samples.map((s) => s.latencyMs);
        const summary = ring.handoverSummary(now, BY_CAUSE_WINDOW_MS);
        expect(summary.count).toBe(samples.length);
        expectClose(summary.p50, exactPercentile(all, 0.5));
        expectClose(summary.p95, exactPercentile(all, 0.95));
        expectClose(summary.p99, exactPercentile(all, 0.99));
        const byCause = ring.handoverByCause(now, BY_CAUSE_WINDOW_MS);
        for (const cause of HANDOVER_CAUSES) {
          const mine = samples.filter((s) => s.cause === cause).map((s) => s.latencyMs);
          const one = byCause[cause];
          expect(one.count).toBe(mine.length);
          expectClose(one.p50, exactPercentile(mine, 0.5));
          expectClose(one.p99, exactPercentile(mine, 0.99));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('summarises only the buckets that overlap the asked window', () => {
    const ring = fineRing();
    const now = T0 + 100_000 + 2_000;
    ring.recordHandover(now, 'release', binOf(1)); // current bucket
    ring.recordHandover(now - 60_000, 'release', binOf(2)); // bucket start T0+40,000: overlaps the last 60 s
    ring.recordHandover(now - 75_000, 'release', binOf(4)); // bucket start T0+20,000: ends before the window starts
    expect(ring.handoverSummary(now, 60_000).count).toBe(2);
    expect(ring.handoverSummary(now, 90_000).count).toBe(3);
  });

  it('counts handovers only, not grants, queue waits or hold times', () => {
    const ring = fineRing();
    ring.recordGrant(T0, binOf(5));
    ring.recordHold(T0, binOf(50));
    ring.recordBlockedExpiry(T0, binOf(500));
    expect(ring.handoverSummary(T0, 60_000)).toEqual({ count: 0, p50: null, p95: null, p99: null });
    ring.recordHandover(T0, 'release', binOf(0));
    expect(ring.handoverSummary(T0, 60_000)).toEqual({ count: 1, p50: 0, p95: 0, p99: 0 });
    expect(ring.handoverByCause(T0, 60_000).expiry).toEqual({ count: 0, p50: null, p95: null, p99: null });
  });

  it('forgets a handover once its bucket has left the window', () => {
    const ring = fineRing();
    ring.recordHandover(T0, 'expiry', binOf(30));
    expect(ring.handoverSummary(T0 + 50_000, 60_000).count).toBe(1);
    expect(ring.handoverSummary(T0 + 75_000, 60_000).count).toBe(0);
    expect(ring.handoverByCause(T0 + 75_000, BY_CAUSE_WINDOW_MS).expiry.count).toBe(1);
  });
});
