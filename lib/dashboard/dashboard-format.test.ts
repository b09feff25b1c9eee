import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatAgo, formatCountdown, formatDuration, formatLatency, formatLeaseLeft, formatSpan, groupDigits } from './dashboard-format.ts';

describe('formatting', () => {
  it('writes a hold or wait span as a latency below a second and a human duration above (issue 30: not raw ms)', () => {
    expect(formatSpan(null)).toBe('—');
    expect(formatSpan(0)).toBe('< 1 µs');
    expect(formatSpan(0.25)).toBe('250 µs');
    expect(formatSpan(512.3)).toBe('512 ms');
    expect(formatSpan(12_345)).toBe('12.3 s');
    expect(formatSpan(83_000)).toBe('1 m 23 s');
    expect(formatSpan(7_380_000)).toBe('2 h 3 m');
  });

  it('writes a countdown like a duration, rounded down', () => {
    expect(formatCountdown(12_345)).toBe('12.3 s');
    expect(formatCountdown(99)).toBe('99 ms');
    expect(formatCountdown(-5)).toBe('0 ms');
    expect(formatCountdown(3_589_300)).toBe('59 m 49 s');
  });

  it('writes lease left as a duration that says it is what is left', () => {
    expect(formatLeaseLeft(3_589_300)).toBe('59 m 49 s left');
    expect(formatLeaseLeft(4_250)).toBe('4.2 s left');
    expect(formatLeaseLeft(850)).toBe('850 ms left');
  });

  it('writes durations at a readable precision', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_340)).toBe('12.3 s');
    expect(formatDuration(4_290)).toBe('4.2 s');
    expect(formatDuration(245_000)).toBe('4 m 5 s');
    expect(formatDuration(2 * 3_600_000 + 3 * 60_000)).toBe('2 h 3 m');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(formatDuration(Number.NaN)).toBe('0 ms');
  });

  it('never shows more time than there is, and never less than a whole unit below it', () => {
    const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * 86_400_000 }), (ms) => {
        const parts = [...formatDuration(ms).matchAll(/([\d.]+) (ms|s|m|h|d)/g)];
        const shown = parts.reduce((sum, [, n, unit]) => sum + Number(n) * (units[unit as string] ?? Number.NaN), 0);
        const smallest = units[parts[parts.length - 1]?.[2] as string] ?? Number.NaN;
        const step = parts.length === 1 && parts[0]?.[2] === 's' ? 100 : smallest;
        expect(shown).toBeLessThanOrEqual(ms + 1e-6);
        expect(ms - shown).toBeLessThan(step + 1e-6);
      }),
    );
  });

  it('writes latencies with a dash for no samples', () => {
    expect(formatLatency(null)).toBe('—');
    expect(formatLatency(0)).toBe('< 1 µs');
    expect(formatLatency(0.0042)).toBe('4.2 µs');
    expect(formatLatency(0.123)).toBe('123 µs');
    expect(formatLatency(12.34)).toBe('12.3 ms');
    expect(formatLatency(1234.4)).toBe('1,234 ms');
  });

  it('never writes a duration under a second as "1000 ms"', () => {
    expect(formatDuration(999.6)).toBe('999 ms');
    expect(formatDuration(1_000)).toBe('1.0 s');
  });

  it('moves a latency to the next unit when rounding reaches it', () => {
    expect(formatLatency(0.9996)).toBe('1.0 ms');
    expect(formatLatency(0.9994)).toBe('999 µs');
    expect(formatLatency(99.96)).toBe('100 ms');
    expect(formatLatency(99.94)).toBe('99.9 ms');
  });

  it('writes how long ago something was seen', () => {
    expect(formatAgo(200)).toBe('just now');
    expect(formatAgo(12_500)).toBe('12 s ago');
    expect(formatAgo(180_000)).toBe('3 m ago');
  });

  it('groups the digits of a u64 token', () => {
    expect(groupDigits('18446744073709551615')).toBe('18,446,744,073,709,551,615');
    expect(groupDigits('42')).toBe('42');
  });
});
