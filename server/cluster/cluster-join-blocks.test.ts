// A standby joins an active holding 500,000 locks under 2,000 handovers/s of churn, and neither
// node's event loop is held long in one go: the active reads its table a slice per turn
// (snapshot-walk.ts, 16 KiB parts), the standby handles received lines for at most 2 ms a turn
// (peer-link.ts). Either one doing the whole table, or a large part of it, in one turn shows here.
//
// What is bounded is the longest block of each node during the join in CPU time of its loop's
// thread (loopBusyMs in GET /api/v1/cluster, busy-blocks.ts): its work plus the garbage-collection
// pauses in it, not the time it waited for a core. This was measured on 2 cores shared with six
// other helpers' tests and benchmarks (load average 7 to 15), where the wall figure (loopDelayMs)
// of the same join reached 60 to 150 ms on the active and 280 to 650 ms on the standby:
//   - active: 9 to 34 ms in seven runs. Bound: 100 ms, three times the worst seen. The whole
//     table in one turn (the walk before it was sliced) is well over a second.
//   - standby: 52 to 107 ms in five runs, mostly garbage-collection pauses (scavenges of the
//     claims the snapshot creates: what a lock costs in the engine's heap decides them). Bound:
//     400 ms, almost four times the worst seen and well under the 1 s peer timeout, where a block
//     costs a standby its place (and an active its role). The code before the turn budget
//     (peer-link.ts) failed it in one run of two (a 536 ms block, 392 ms of it not GC: megabytes
//     of parts handled in one turn after the standby had waited for a core). What can still pass
//     it: a standby starved past a peer timeout and cut off mid-join starts over from an empty
//     table; the engine's reset used to walk every claim it had in one turn there (448 ms once,
//     at a load of 15), and now the standby empties its table a slice per turn first
//     (table-clear.ts). Runs of 2026-12-05 at a load of 17 to 24: 55 ms at 500,000 locks, 90 ms
//     at 1,000,000 (bench:cluster --only join). The bound stays at 400 ms: GC pauses (scavenges
//     of 150-400 ms wall on that load) are partly counted in CPU time, and a tighter bound would
//     fail on the load rather than on a change.
import { describe, expect, it } from 'vitest';
import { startCluster, waitFor } from '../testing/cluster-harness.ts';
import { fillLocks, startChurn } from '../testing/lock-load.ts';

const LOCKS = 500_000;
const ACTIVE_BOUND_MS = 100;
const STANDBY_BOUND_MS = 400;

describe('the event loops while a standby joins a large table', () => {
  it(`joins ${LOCKS} locks under churn with no block over ${ACTIVE_BOUND_MS} ms of CPU on the active nor ${STANDBY_BOUND_MS} ms on the standby`, {
    timeout: 180_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2, start: ['a'], teardownGraceMs: 3_000, startTimeoutMs: 30_000 });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a to promote alone' });
    await fillLocks(a.ports.lock, LOCKS);
    const churn = await startChurn(a.ports.lock, 2_000);
    cluster.defer(() => churn.stop());
    // The fill's own blocks leave the window first.
    await new Promise((r) => setTimeout(r, 3_000));
    const failoversBefore = (await a.cluster()).failovers.length;
    const t0 = performance.now();
    await b.start();
    await waitFor(async () => (await a.cluster().catch(() => null))?.nodes.find((n) => n.id === 'b')?.inSync === true, {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: 'b in sync',
    });
    // The second under way goes into the ring at its end; the GC entries of a block come a little later.
    await new Promise((r) => setTimeout(r, 1_200));
    const seconds = Math.ceil((performance.now() - t0) / 1_000) + 1;
    const churned = await churn.stop();
    const [viewA, viewB] = [await a.cluster(), await b.cluster()];
    const window = (v: number[] | undefined): number[] => (v ?? []).slice(-seconds);
    const activeBusy = window(viewA.loopBusyMs);
    const standbyBusy = window(viewB.loopBusyMs);
    const figures = JSON.stringify({
      seconds,
      active: { busy: activeBusy, work: window(viewA.loopWorkMs), wall: window(viewA.loopDelayMs), gc: window(viewA.gcPauseMs) },
      standby: { busy: standbyBusy, work: window(viewB.loopWorkMs), wall: window(viewB.loopDelayMs), gc: window(viewB.gcPauseMs) },
    });
    expect(activeBusy.length, `a figure for every second of the join: ${figures}`).toBeGreaterThan(2);
    expect(
      standbyBusy.some((ms) => ms > 0),
      `the standby's blocks are measured: ${figures}`,
    ).toBe(true);
    expect(Math.max(...activeBusy), `the active's longest block in CPU time: ${figures}`).toBeLessThanOrEqual(ACTIVE_BOUND_MS);
    expect(Math.max(...standbyBusy), `the standby's longest block in CPU time: ${figures}`).toBeLessThanOrEqual(STANDBY_BOUND_MS);

    expect(churned.unexpected, 'the churning clients saw only grants and OKs').toEqual([]);
    expect(viewA.failovers.length, 'no failover during the join').toBe(failoversBefore);
    // Only a's phase: on a host this busy the standby's wall-clock freeze check may fire (and it re-syncs) after the join.
    expect(viewA.phase, 'a stayed active').toBe('active');
    const synced = b.logEntries().filter((e) => e.msg === 'synced from the active node');
    expect(Number(synced.at(-1)?.locks), 'the standby has the whole table').toBeGreaterThanOrEqual(LOCKS);
    console.log(`join blocks: ${figures}`);
  });
});
