import { describe, expect, it } from 'vitest';
import { formatDurationFlag, parseDurationFlag } from './duration-flag.ts';

describe('parseDurationFlag', () => {
  it('reads milliseconds, seconds, minutes and hours', () => {
    expect(parseDurationFlag('250ms')).toBe(250);
    expect(parseDurationFlag('5s')).toBe(5_000);
    expect(parseDurationFlag('2m')).toBe(120_000);
    expect(parseDurationFlag('1h')).toBe(3_600_000);
    expect(parseDurationFlag('1.5s')).toBe(1_500);
  });

  it('rejects numbers without a unit, negative values and junk', () => {
    for (const bad of ['5', '-1s', 's', '1.s', '5 s', '5sec', '', 'ms']) expect(parseDurationFlag(bad)).toBeNull();
  });

  it('formats back to a readable duration', () => {
    expect(formatDurationFlag(250)).toBe('250ms');
    expect(formatDurationFlag(5_000)).toBe('5s');
    expect(formatDurationFlag(120_000)).toBe('2m');
  });
});
