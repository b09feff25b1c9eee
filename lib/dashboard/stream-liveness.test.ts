import { describe, expect, it } from 'vitest';
import { CONNECT_LIMIT_MS, SILENT_LIMIT_MS, StreamLiveness } from './stream-liveness.ts';

/** Runs the page's 100 ms checks from `from` up to `to` and returns the verdict at `to`. */
function checkUntil(live: StreamLiveness, from: number, to: number): string {
  for (let t = from; t < to; t += 100) live.check(t);
  return live.check(to);
}

describe('StreamLiveness', () => {
  it('counts a stream that has sent data as alive up to 1.5 s of silence, and lost after', () => {
    const live = new StreamLiveness(0);
    live.message(1_000);
    expect(checkUntil(live, 0, 1_000 + SILENT_LIMIT_MS)).toBe('ok');
    expect(live.check(1_001 + SILENT_LIMIT_MS)).toBe('silent');
  });

  it('takes every message (a ping included) as a sign of life', () => {
    const live = new StreamLiveness(0);
    for (let t = 0; t <= 10_000; t += 500) {
      live.message(t);
      expect(checkUntil(live, t, t + 1_000)).toBe('ok');
    }
    expect(live.lastActivityAt).toBe(10_000);
  });

  it('gives a new connection 10 s for its first message before calling it lost', () => {
    const live = new StreamLiveness(0);
    live.message(100);
    live.opened(5_000);
    expect(checkUntil(live, 100, 5_000 + SILENT_LIMIT_MS + 1)).toBe('ok');
    expect(checkUntil(live, 5_000 + SILENT_LIMIT_MS + 1, 5_000 + CONNECT_LIMIT_MS)).toBe('ok');
    expect(live.check(5_001 + CONNECT_LIMIT_MS)).toBe('silent');
  });

  it('is alive again as soon as a message comes after a silence', () => {
    const live = new StreamLiveness(0);
    live.message(0);
    expect(checkUntil(live, 0, 3_000)).toBe('silent');
    live.message(3_050);
    expect(live.check(3_100)).toBe('ok');
  });

  it('gives no verdict on a check that comes late (the page itself was held up), and the next one on time does', () => {
    const live = new StreamLiveness(0);
    live.message(0);
    expect(checkUntil(live, 0, 1_500)).toBe('ok');
    // The page was busy for 3 s: messages may be queued behind this check.
    expect(live.check(4_500)).toBe('ok');
    expect(live.check(4_600)).toBe('silent');
    live.message(4_550);
    expect(live.check(4_700)).toBe('ok');
  });
});
