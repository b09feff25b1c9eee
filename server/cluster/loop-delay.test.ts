// The per-second event-loop delay figure the cluster view shows: a loop that was held shows it.
import { afterEach, expect, it } from 'vitest';
import { LoopDelayWatch } from './loop-delay.ts';

let watch: LoopDelayWatch | null = null;
afterEach(() => watch?.stop());

it('a loop held for 60 ms shows a delay of at least that in the second under way', async () => {
  watch = new LoopDelayWatch();
  watch.start();
  await new Promise((r) => setTimeout(r, 30));
  const until = performance.now() + 60;
  while (performance.now() < until);
  await new Promise((r) => setTimeout(r, 20));
  const seconds = watch.perSecondMaxMs();
  expect(Math.max(...seconds)).toBeGreaterThanOrEqual(60);
});

it('a watch never started shows one quiet second', () => {
  const idle = new LoopDelayWatch();
  expect(idle.perSecondMaxMs()).toEqual([0]);
  expect(idle.perSecondGcMs()).toEqual([0]);
});

it('garbage collection shows as a pause in the second under way', async () => {
  watch = new LoopDelayWatch();
  watch.start();
  let keep: number[][] = [];
  for (let i = 0; i < 2_000_000; i++) {
    keep.push([i, i + 1]);
    if (keep.length > 10_000) keep = [];
  }
  // GC entries reach the observer asynchronously.
  await new Promise((r) => setTimeout(r, 50));
  expect(Math.max(...watch.perSecondGcMs())).toBeGreaterThan(0);
  expect(keep.length).toBeLessThanOrEqual(10_001);
});
