import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.ts';

describe('parseDuration', () => {
  it('reads milliseconds, seconds, minutes and hours', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('5s')).toBe(5_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1.5s')).toBe(1_500);
  });

  it('rejects numbers without a unit, negative values and junk', () => {
    for (const bad of ['5', '-1s', 's', '1.s', '5 s', '5sec', '', 'ms']) expect(parseDuration(bad)).toBeNull();
  });

  it('formats back to a readable duration', () => {
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(5_000)).toBe('5s');
    expect(formatDuration(120_000)).toBe('2m');
  });
});
