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
  expect(new LoopDelayWatch().perSecondMaxMs()).toEqual([0]);
});
