import { describe, expect, it } from 'vitest';
import { CLEAR_TURN_MS, RESET_AT_ONCE_MAX, TableClear } from './table-clear.ts';

/** A table of `n` locks in a Map, as the engine's public API shows it; `cost` ms of the fake clock per cleared lock. */
function fakeEngine(n: number, cost = 0.01) {
  const locks = new Map<string, { name: string }>();
  for (let i = 0; i < n; i++) locks.set(`l${i}`, { name: `l${i}` });
  let clock = 0;
  const calls = { resets: 0, resetSizes: [] as number[] };
  const engine = {
    get lockCount() {
      return locks.size;
    },
    allLocks: () => locks.values(),
    replicaClearLock(name: string) {
      clock += cost;
      locks.delete(name);
    },
    reset() {
      calls.resets++;
      calls.resetSizes.push(locks.size);
      locks.clear();
    },
  };
  const queue: Array<() => void> = [];
  const clear = new TableClear(
    engine as never,
    (step) => queue.push(step),
    () => clock,
  );
  /** Runs one scheduled turn; false when none is waiting. */
  const turn = (): boolean => {
    const step = queue.shift();
    if (step === undefined) return false;
    step();
    return true;
  };
  return { locks, calls, clear, turn, queue };
}

describe('TableClear', () => {
  it('resets a small table at once and calls back in the same turn', () => {
    const { calls, clear, queue } = fakeEngine(RESET_AT_ONCE_MAX);
    let done = 0;
    clear.clearThen(() => done++);
    expect(done).toBe(1);
    expect(calls.resets).toBe(1);
    expect(queue.length).toBe(0);
    expect(clear.clearing).toBe(false);
  });

  it('empties a large table a slice per turn, each within the turn budget, then resets an empty table and calls back once', () => {
    const n = 40_000;
    const { locks, calls, clear, turn } = fakeEngine(n, 0.01);
    let done = 0;
    let reported = -1;
    clear.clearThen((slices) => {
      done++;
      reported = slices;
    });
    expect(clear.clearing).toBe(true);
    expect(locks.size, 'nothing cleared before the first turn').toBe(n);
    let turns = 0;
    let before = locks.size;
    while (turn()) {
      turns++;
      // CLEAR_TURN_MS at 0.01 ms a lock, checked every 64 locks: at most 200 + 63 locks a turn.
      expect(before - locks.size).toBeLessThanOrEqual(CLEAR_TURN_MS / 0.01 + 64);
      before = locks.size;
      if (turns < 10) expect(done).toBe(0);
    }
    expect(turns).toBeGreaterThan(n / 300);
    expect(done).toBe(1);
    expect(reported, 'the callback is told how many turns it took').toBe(turns);
    expect(locks.size).toBe(0);
    expect(calls.resetSizes, 'the one reset finds the table empty').toEqual([0]);
    expect(clear.clearing).toBe(false);
  });

  it('a second request while clearing keeps one clear going and calls only the latest callback', () => {
    const { clear, turn } = fakeEngine(50_000);
    const called: string[] = [];
    clear.clearThen(() => called.push('first'));
    turn();
    clear.clearThen(() => called.push('second'));
    while (turn());
    expect(called).toEqual(['second']);
  });

  it('a lock filed behind the walk while clearing goes with the final reset', () => {
    const { locks, calls, clear, turn } = fakeEngine(50_000);
    clear.clearThen(() => {});
    turn();
    locks.set('late', { name: 'late' });
    while (turn());
    expect(locks.size).toBe(0);
    expect(calls.resets).toBe(1);
  });

  it('cancel stops a clear: no callback, the rest of the table stays', () => {
    const { locks, clear, turn } = fakeEngine(50_000);
    let done = 0;
    clear.clearThen(() => done++);
    turn();
    const left = locks.size;
    clear.cancel();
    while (turn());
    expect(done).toBe(0);
    expect(locks.size).toBe(left);
    expect(left).toBeGreaterThan(0);
    expect(clear.clearing).toBe(false);
  });
});
