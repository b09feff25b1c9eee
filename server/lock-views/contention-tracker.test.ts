// The contention tracker on a real engine with a fake clock: the locks with the longest queues
// now, the most waited-for over a range, bounded memory per bucket, and a reset relearnt.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Owner, engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { BUCKET_MS, ContentionTracker } from './contention-tracker.ts';

function setup(bucketLocks?: number) {
  const f = engineFixture();
  const clock = { now: () => f.clock.now(), wall: (ms: number) => 1_700_000_000_000 + ms };
  const tracker = new ContentionTracker(f.engine, clock, bucketLocks);
  /** `waiters` claims queue behind one holder of `name`. */
  const contend = (name: string, waiters: number) => {
    f.fixed(name, new Owner(), 60_000);
    for (let i = 0; i < waiters; i++) f.fixed(name, new Owner(), 60_000);
  };
  return { ...f, tracker, contend };
}

describe('the contention tracker', () => {
  it('ranks the locks with queues now by queue length, leaving out the 200 merely held', () => {
    const t = setup();
    for (let i = 0; i < 200; i++) t.fixed(`stuck/${String(i).padStart(3, '0')}`, new Owner(), 600_000);
    t.contend('hot/b', 3);
    t.tick(1_000);
    t.contend('hot/a', 7);
    t.contend('hot/c', 3);
    const now = t.tracker.now(10);
    expect(now.queuedLocks).toBe(3);
    // hot/b and hot/c tie on queue length: hot/b's first waiter has waited longer.
    expect(now.locks.map((l) => [l.name, l.queueLength])).toEqual([
      ['hot/a', 7],
      ['hot/b', 3],
      ['hot/c', 3],
    ]);
    expect(now.locks[1]?.longestWaitMs).toBe(1_000);
    expect(t.tracker.now(1).locks.map((l) => l.name)).toEqual(['hot/a']);
  });

  it('drops a lock from now once its queue is empty', () => {
    const t = setup();
    const holder = t.fixed('q', new Owner(), 60_000);
    const waiter = new Owner();
    t.fixed('q', waiter, 60_000);
    expect(t.tracker.now(5).queuedLocks).toBe(1);
    t.engine.release('q', holder.token);
    expect(t.tracker.now(5)).toEqual({ locks: [], queuedLocks: 0 });
  });

  it('sums the waits of queued grants over the range, and forgets what is older than the range', () => {
    const t = setup();
    const h = t.fixed('busy', new Owner(), 60_000);
    t.fixed('busy', new Owner(), 60_000);
    t.fixed('busy', new Owner(), 60_000);
    t.tick(2_000);
    const next = t.engine.release('busy', h.token);
    expect(next).toBe('ok');
    const over = t.tracker.over('1h', 10);
    expect(over).toEqual([{ name: 'busy', queuedGrants: 1, maxWaitMs: 2_000, totalWaitMs: 2_000, maxQueue: 2 }]);
    // Two hours later the 1 h range no longer reaches that bucket; the 24 h one does.
    t.clock.advance(2 * 3_600_000);
    expect(t.tracker.over('1h', 10)).toEqual([]);
    expect(t.tracker.over('24h', 10).map((o) => o.name)).toEqual(['busy']);
  });

  it('keeps the most waited-for locks exactly, with at most its bound of locks per bucket', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 39 }), { minLength: 1, maxLength: 300 }), (picks) => {
        const t = setup(8);
        // Lock hot/0 gets a wait of 10 s per round; the others one of 1-40 ms.
        for (const [round, i] of picks.entries()) {
          for (const name of ['hot/0', `cold/${i}`]) {
            const h = t.fixed(name, new Owner(), 600_000);
            t.fixed(name, new Owner(), 600_000);
            t.clock.advance(name === 'hot/0' ? 10_000 : 1 + (round % 40));
            t.engine.release(name, h.token);
            const after = t.engine.lock(name)?.holder;
            if (after) t.engine.release(name, after.token);
          }
        }
        const over = t.tracker.over('24h', 50);
        expect(over[0]?.name).toBe('hot/0');
        expect(over[0]?.queuedGrants).toBe(picks.length);
        // Each bucket keeps 8 locks at most, and the range holds at most 289 buckets.
        const buckets = Math.ceil((t.clock.now() - 1_000) / BUCKET_MS) + 1;
        expect(over.length).toBeLessThanOrEqual(8 * buckets);
      }),
      { numRuns: 30 },
    );
  });

  it('learns the queues again from the table after a reset', () => {
    const t = setup();
    t.contend('kept', 2);
    // A reset (a standby's fresh snapshot) ends every claim; the queues there after it come from the table.
    t.engine.reset();
    expect(t.tracker.now(5).queuedLocks).toBe(0);
    t.contend('after', 1);
    expect(t.tracker.now(5).locks.map((l) => l.name)).toEqual(['after']);
  });

  it('finds the queues that formed before it started, from the table', () => {
    const f = engineFixture();
    f.fixed('early', new Owner(), 60_000);
    f.fixed('early', new Owner(), 60_000);
    const tracker = new ContentionTracker(f.engine, { now: () => f.clock.now(), wall: (ms) => ms });
    expect(tracker.now(5).locks.map((l) => [l.name, l.queueLength])).toEqual([['early', 1]]);
  });

  it('stops listening when closed', () => {
    const t = setup();
    const listeners = t.engine.listenerCount;
    t.tracker.close();
    expect(t.engine.listenerCount).toBe(listeners - 1);
  });
});
