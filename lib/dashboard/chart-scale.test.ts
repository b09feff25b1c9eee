import { describe, expect, it } from 'vitest';
import { durationAxis, parseRangeParam, plotPoints, rangeParam, stepTick, valueRange } from './chart-scale.ts';

describe('duration axes', () => {
  it('a log axis spans whole decades in human units, so a 28 s wait leaves room for 300 ms ones', () => {
    const axis = durationAxis('log', 280, 28_000);
    expect(axis.domain).toEqual([100, 60_000]);
    expect(axis.ticks.map(axis.format)).toEqual(['100 ms', '1 s', '10 s', '1 min']);
  });

  it('a log axis over µs to hours keeps at most seven ticks, every other decade, the top one included', () => {
    const axis = durationAxis('log', 0.0005, 5 * 3_600_000);
    expect(axis.domain).toEqual([0.001, 36_000_000]);
    expect(axis.ticks.length).toBeLessThanOrEqual(7);
    expect(axis.ticks[0]).toBeLessThanOrEqual(0.01);
    expect(axis.ticks.at(-1)).toBe(36_000_000);
    expect(axis.ticks.map(axis.format)).not.toContain(expect.stringMatching(/\./));
  });

  it.each([
    [200_000, ['0', '1 min', '2 min', '3 min', '4 min']],
    [28_000, ['0', '10 s', '20 s', '30 s']],
    [90_000, ['0', '30 s', '60 s', '90 s']],
    [0.8, ['0', '200 µs', '400 µs', '600 µs', '800 µs']],
    [7_000_000, ['0', '30 min', '60 min', '90 min', '120 min']],
  ])('a linear axis up to %s ms ticks in whole steps of one unit: %j', (max, labels) => {
    const axis = durationAxis('linear', 1, max);
    expect(axis.ticks.map(axis.format)).toEqual(labels);
    expect(axis.domain[1]).toBeGreaterThanOrEqual(max);
  });

  it('never writes a tick such as "1.7 min": whole steps of one unit, or tenths on the way up to the next unit', () => {
    for (let max = 0.0013; max < 90_000_000; max *= 1.37) {
      const axis = durationAxis('linear', 1, max);
      for (const t of axis.ticks) expect(axis.format(t)).toMatch(/^(0|\d+ (µs|ms|s|min|h)|\d+\.\d (ms|s))$/);
    }
    expect(stepTick(100_000, 50_000)).toBe('100 s');
  });

  it('an empty axis reads "0 … 1 ms", not "1000 µs"', () => {
    const axis = durationAxis('linear', null, 0);
    expect(axis.ticks.map(axis.format)).toEqual(['0', '0.2 ms', '0.4 ms', '0.6 ms', '0.8 ms', '1 ms']);
  });
});

describe('plot points', () => {
  const points = [
    { start: 0, p50: 300, p99: 28_000 },
    { start: 10_000, p50: null, p99: null },
    { start: 20_000, p50: 0, p99: 0 },
    { start: 30_000, p50: 5, p99: 9 },
  ];

  it('keeps the bucket in progress apart, joined by a dashed segment to the last finished point, with how much of it passed', () => {
    const out = plotPoints(points, 34_000, '5m', 'linear');
    expect(out.at(-1)).toMatchObject({ p50: null, p99: null, p50Partial: 5, p99Partial: 9, partialMs: 4_000 });
    expect(out[2]).toMatchObject({ p50: 0, p50Partial: 0, partialMs: null });
    expect(out[0]).toMatchObject({ p50: 300, p50Partial: null });
  });

  it('puts figures under 1 µs on a log axis’s floor and keeps the measured values for the tooltip', () => {
    const out = plotPoints(points, 34_000, '5m', 'log');
    expect(out[2]).toMatchObject({ p50: 0.001, p50Value: 0 });
    expect(valueRange(points)).toEqual({ minPositive: 5, max: 28_000 });
  });
});

describe('the range URL parameter', () => {
  it('reads a known range and falls back to 5 minutes, and leaves the default out of the URL', () => {
    expect(parseRangeParam('1h')).toBe('1h');
    expect(parseRangeParam('24h')).toBe('24h');
    expect(parseRangeParam('7d')).toBe('5m');
    expect(parseRangeParam(null)).toBe('5m');
    expect(rangeParam('5m')).toBeNull();
    expect(rangeParam('24h')).toBe('24h');
  });
});
