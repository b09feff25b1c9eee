// Waiting requests as the table grows: per size, a fresh daemon takes `size` locks (fillLocks),
// then `size` waiting acquires queue behind them, one per lock, 5,000 per connection
// (bench/scale-load.ts queueWaiters). Memory per waiter: the RSS growth from the held table to
// the held table with its waiters, divided by the waiters (their connections included: 200 of
// them at 1,000,000, a few KiB each, under 1 B per waiter).
import { startBaton } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { memKiB, queueWaiters } from './scale-load.ts';
import { track } from './servers/server-process.ts';
import { round } from './stats.ts';
import { fillLocks } from '../server/testing/lock-load.ts';

const SETTLE_MS = 2_000;

export interface WaiterRow {
  waiters: number;
  heldRssMiB: number;
  withWaitersRssMiB: number;
  bytesPerWaiter: number;
  queueSeconds: number;
}

export async function waitersSection(sizes: number[], say: (text: string) => void): Promise<WaiterRow[]> {
  const rows: WaiterRow[] = [];
  for (const size of sizes) {
    const baton = await startBaton();
    track(baton.child);
    try {
      const pid = baton.child.pid as number;
      // Grow the young generation to its working size first (as the held-lock part does).
      await rawKeyedLoad(baton.lockPort, 50, 16, 1_000);
      say(`scale: ${size} waiters behind ${size} held locks`);
      await fillLocks(baton.lockPort, size, 'scale/wait');
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const held = memKiB(pid).rss;
      const t0 = performance.now();
      const waiters = await queueWaiters(baton.lockPort, size, 'scale/wait');
      const queueSeconds = round((performance.now() - t0) / 1_000, 1);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const withWaiters = memKiB(pid).rss;
      waiters.close();
      rows.push({
        waiters: size,
        heldRssMiB: round(held / 1024, 1),
        withWaitersRssMiB: round(withWaiters / 1024, 1),
        bytesPerWaiter: Math.round(((withWaiters - held) * 1024) / size),
        queueSeconds,
      });
      say(`scale: ${size} waiters: ${rows.at(-1)?.bytesPerWaiter} B per waiter`);
    } finally {
      await baton.stop();
    }
  }
  return rows;
}
