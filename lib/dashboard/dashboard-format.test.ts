import { describe, expect, it } from 'vitest';
import { formatAgo, formatCountdown, formatDuration, formatLatency, groupDigits } from './dashboard-format.ts';

describe('formatting', () => {
  it('writes a countdown in seconds with one decimal, rounded down', () => {
    expect(formatCountdown(12_345)).toBe('12.3 s');
    expect(formatCountdown(99)).toBe('0.0 s');
    expect(formatCountdown(-5)).toBe('0.0 s');
    expect(formatCountdown(300_000)).toBe('300.0 s');
  });

  it('writes durations at a readable precision', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_340)).toBe('12.3 s');
    expect(formatDuration(245_000)).toBe('4 m 05 s');
    expect(formatDuration(2 * 3_600_000 + 3 * 60_000)).toBe('2 h 03 m');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 04 h');
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
