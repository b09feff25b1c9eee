import { describe, expect, it } from 'vitest';
import { dataNow } from './data-now.ts';

describe('dataNow (countdowns stop at the last data while the stream is lost)', () => {
  const lastData = { wall: 1_700_000_000_000, mono: 10_400, lostAt: 11_900 };

  it('reads the tick while live or connecting', () => {
    expect(dataNow(12_000, { phase: 'live' })).toBe(12_000);
    expect(dataNow(12_000, { phase: 'connecting' })).toBe(12_000);
  });

  it('reads the last data’s arrival while lost, even when the shared tick is older than it', () => {
    // The beat ticked at 10,000; the last ping came at 10,400; the loss was seen at 11,900 while
    // the tick still said 10,000. A countdown drawn now and one drawn a beat later must agree.
    expect(dataNow(10_000, { phase: 'disconnected', lastData })).toBe(10_400);
    expect(dataNow(10_500, { phase: 'disconnected', lastData })).toBe(10_400);
    expect(dataNow(60_000, { phase: 'disconnected', lastData })).toBe(10_400);
  });

  it('reads the tick when a loss carries no data time (lost before the first snapshot)', () => {
    expect(dataNow(10_000, { phase: 'disconnected' })).toBe(10_000);
  });
});
