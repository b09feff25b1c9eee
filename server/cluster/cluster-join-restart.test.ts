// A standby frozen in the middle of a join (SIGSTOP past the peer timeout, as a starved host or
// a long pause does) is cut off by the active and starts over: it empties the part it has a
// slice per turn (table-clear.ts) rather than in one reset, asks again, and ends in sync with
// the whole table; nobody fails over, and it never takes the active role with its part
// (role-decider.ts holdsPartialTable). Before, the reset of the part in one turn at millions of
// locks froze it past the peer timeout again, and the join never ended (issue 29).
import { describe, expect, it } from 'vitest';
import type { StatsView } from '../../lib/ops-api/api-types.ts';
import { startCluster, waitFor } from '../testing/cluster-harness.ts';
import { fillLocks } from '../testing/lock-load.ts';

const LOCKS = 300_000;
/** More than the table-clear threshold (20,000 locks) must have come before the freeze. */
const PART_BEFORE_FREEZE = 40_000;

describe('a standby frozen in the middle of a join', () => {
  it(`is cut off, empties its part of ${LOCKS} locks a slice per turn, asks again and gets the whole table`, { timeout: 180_000 }, async () => {
    const cluster = await startCluster({ nodes: 2, start: ['a'], teardownGraceMs: 3_000, startTimeoutMs: 30_000 });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a to promote alone' });
    await fillLocks(a.ports.lock, LOCKS);
    const failoversBefore = (await a.cluster()).failovers.length;
    await b.start();
    await waitFor(
      async () => {
        const stats = await b.api<StatsView>('/api/v1/stats', {}, 5_000).catch(() => null);
        return stats !== null && stats.status === 200 && stats.body.held > PART_BEFORE_FREEZE;
      },
      { timeoutMs: 60_000, intervalMs: 20, what: `more than ${PART_BEFORE_FREEZE} locks on b` },
    );
    cluster.defer(() => {
      if (b.stopped) b.signal('SIGCONT');
    });
    b.signal('SIGSTOP');
    expect(
      b.logEntries().some((e) => e.msg === 'synced from the active node'),
      'b was still joining when it was frozen',
    ).toBe(false);
    // Past the peer timeout a hears nothing from b and, at its next decision (DECIDE_EVERY_MS),
    // drops its link and the stream with it (its replicationLag for b goes). `alive` alone is not
    // that: it turns false at the timeout itself, and b resumed in between is heard again, keeps
    // its link and finishes the join it was in (nothing to clear, nothing to test): b answers
    // within a few ms of SIGCONT now that its first turn handles 2 ms of the stream, not 2 ms per read.
    await waitFor(
      async () => {
        const seen = (await a.cluster()).nodes.find((n) => n.id === 'b');
        return seen?.alive === false && seen.replicationLag === null;
      },
      { timeoutMs: 10_000, what: 'a to drop its link to b and the stream with it' },
    );
    b.signal('SIGCONT');

    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.inSync === true, {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: 'b in sync again',
    });
    // b logs its sync before it tells a, but its stderr can reach this process after a's answer.
    const synced = await waitFor(
      () => {
        const lines = b.logEntries().filter((e) => e.msg === 'synced from the active node');
        return lines.length > 0 ? lines : null;
      },
      { timeoutMs: 10_000, what: "b's log to say it synced" },
    );
    const emptied = b.logEntries().filter((e) => e.msg === 'mirror emptied a slice per turn before a new sync');
    expect(emptied.length, 'b emptied its part a slice per turn before it asked again').toBeGreaterThanOrEqual(1);
    expect(Number(emptied[0]?.slices)).toBeGreaterThan(1);
    expect(Number(synced.at(-1)?.locks), 'b has the whole table').toBe(LOCKS);
    expect(
      b.logEntries().some((e) => e.msg === 'promoted: this node is active'),
      'b never took the role',
    ).toBe(false);
    const view = await a.cluster();
    expect(view.phase).toBe('active');
    expect(view.failovers.length, 'no failover').toBe(failoversBefore);
  });
});
