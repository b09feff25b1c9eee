import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { onNextTick } from './use-now.ts';

describe('onNextTick (deltas wait for the countdowns’ beat)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs each function once, in order, at the next tick of that clock, then lets the clock stop', () => {
    const ran: string[] = [];
    onNextTick(250, () => ran.push('first'));
    onNextTick(250, () => ran.push('second'));
    vi.advanceTimersByTime(249);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual(['first', 'second']);
    // Nobody watches the clock and nothing waits for it: no timer is left running.
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(ran).toEqual(['first', 'second']);
  });

  it('a function queued at a tick waits for the next one', () => {
    const ran: number[] = [];
    onNextTick(250, () => {
      ran.push(performance.now());
      onNextTick(250, () => ran.push(performance.now()));
    });
    vi.advanceTimersByTime(600);
    expect(ran).toHaveLength(2);
    expect((ran[1] ?? 0) - (ran[0] ?? 0)).toBe(250);
  });
});
