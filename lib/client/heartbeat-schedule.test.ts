import { describe, it, expect } from 'vitest';
import { HeartbeatSchedule } from './heartbeat-schedule.ts';

describe('HeartbeatSchedule', () => {
  it('sends every lease/4 before any round trip is known', () => {
    expect(new HeartbeatSchedule(1000, 50).intervalMs).toBe(250);
  });

  it('smooths round trips with an EWMA of weight 0.2', () => {
    const schedule = new HeartbeatSchedule(1000, 10);
    schedule.sample(10);
    expect(schedule.smoothedRtt).toBe(10);
    schedule.sample(60);
    expect(schedule.smoothedRtt).toBeCloseTo(20, 10); // 10 + 0.2 x (60 - 10)
    expect(schedule.lastRtt).toBe(60);
  });

  it('shortens the interval by twice the smoothed round trip', () => {
    const schedule = new HeartbeatSchedule(1000, 10);
    schedule.sample(40);
    expect(schedule.intervalMs).toBe(250 - 80);
  });

  it('never goes below the floor, nor above lease/4 even when the floor is higher', () => {
    const slow = new HeartbeatSchedule(1000, 50);
    slow.sample(200);
    expect(slow.intervalMs).toBe(50);
    const tiny = new HeartbeatSchedule(100, 50);
    expect(tiny.intervalMs).toBe(25);
  });
});
