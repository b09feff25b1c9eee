import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BINS, MAX_MS, MIN_MS, RELATIVE_ERROR, binOf, newHistogram, percentile } from './log-histogram.ts';

/** The ⌈q·n⌉-th smallest value: what `percentile` approximates. */
function exact(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? Number.NaN;
}

describe('log histogram', () => {
  it('reports every percentile within the stated relative error of the exact one, from 1 µs to 25 h', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: MIN_MS, max: MAX_MS, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.9, 0.99, 1),
        (values, q) => {
          const h = newHistogram();
          for (const v of values) {
            const b = binOf(v);
            h[b] = (h[b] ?? 0) + 1;
          }
          const want = exact(
            [...values].sort((a, b) => a - b),
            q,
          );
          const got = percentile(h, q);
          expect(got).not.toBeNull();
          expect(Math.abs((got ?? 0) - want) / want).toBeLessThanOrEqual(RELATIVE_ERROR);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts zeros (an uncontended grant) in bin 0, reported as 0, and can leave them out', () => {
    const h = newHistogram();
    for (const v of [0, 0, 0, 40]) {
      const b = binOf(v);
      h[b] = (h[b] ?? 0) + 1;
    }
    expect(percentile(h, 0.5)).toBe(0);
    expect(percentile(h, 0.5, 1)).toBeCloseTo(40, -1);
    expect(percentile(newHistogram(), 0.5)).toBeNull();
  });

  it('keeps a bad sample (NaN, negative) out of the real bins and clamps huge values into the top one', () => {
    expect(binOf(Number.NaN)).toBe(0);
    expect(binOf(-5)).toBe(0);
    expect(binOf(1e12)).toBe(BINS - 1);
  });
});
