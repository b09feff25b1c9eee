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
  expect(idle.perSecondBusyMs()).toEqual([0]);
  expect(idle.perSecondWorkMs()).toEqual([0]);
});

it('a loop held by its own work shows it as busy; a loop that only waited (a sleep, as a stolen core looks) does not', async () => {
  watch = new LoopDelayWatch();
  watch.start();
  await new Promise((r) => setTimeout(r, 30));
  // About 80 ms of CPU however long a busy machine makes that take, allocating nothing (so no
  // garbage collection in it): a pure loop, its length calibrated in CPU time first.
  const spin = (n: number): number => {
    let x = 1;
    for (let i = 0; i < n; i++) x = (x * 1103515245 + 12345) | 0;
    return x;
  };
  const from = process.cpuUsage();
  spin(10_000_000);
  const perMillion = Math.max(0.01, process.cpuUsage(from).user / 1_000 / 10);
  await new Promise((r) => setTimeout(r, 30));
  spin(Math.round((80 / perMillion) * 1_000_000));
  // A block is counted once its GC entries can have come (busy-blocks.ts).
  await new Promise((r) => setTimeout(r, 150));
  expect(Math.max(...watch.perSecondBusyMs())).toBeGreaterThanOrEqual(60);
  expect(Math.max(...watch.perSecondWorkMs()), 'no GC in a spin: all of it is work').toBeGreaterThanOrEqual(60);
  watch.stop();
  watch = new LoopDelayWatch();
  watch.start();
  await new Promise((r) => setTimeout(r, 30));
  // Blocked without using the CPU: the loop is held, the process is not busy.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 80);
  await new Promise((r) => setTimeout(r, 150));
  expect(Math.max(...watch.perSecondMaxMs())).toBeGreaterThanOrEqual(60);
  expect(Math.max(...watch.perSecondBusyMs())).toBeLessThan(40);
  expect(Math.max(...watch.perSecondWorkMs())).toBeLessThan(40);
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
