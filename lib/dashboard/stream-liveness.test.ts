import { describe, expect, it } from 'vitest';
import { CONNECT_LIMIT_MS, SILENT_LIMIT_MS, StreamLiveness } from './stream-liveness.ts';

describe('StreamLiveness', () => {
  it('counts a stream that has sent data as alive up to 1.5 s of silence, and lost after', () => {
    const live = new StreamLiveness(0);
    live.message(1_000);
    expect(live.check(1_000 + SILENT_LIMIT_MS)).toBe('ok');
    expect(live.check(1_001 + SILENT_LIMIT_MS)).toBe('silent');
  });

  it('takes every message (a ping included) as a sign of life', () => {
    const live = new StreamLiveness(0);
    for (let t = 0; t <= 10_000; t += 500) {
      live.message(t);
      expect(live.check(t + 1_000)).toBe('ok');
    }
    expect(live.lastActivityAt).toBe(10_000);
  });

  it('gives a new connection 10 s for its first message before calling it lost', () => {
    const live = new StreamLiveness(0);
    live.message(100);
    live.opened(5_000);
    expect(live.check(5_000 + SILENT_LIMIT_MS + 1)).toBe('ok');
    expect(live.check(5_000 + CONNECT_LIMIT_MS + 1)).toBe('silent');
  });

  it('is alive again as soon as a message comes after a silence', () => {
    const live = new StreamLiveness(0);
    live.message(0);
    expect(live.check(3_000)).toBe('silent');
    live.message(3_100);
    expect(live.check(3_200)).toBe('ok');
  });
});
