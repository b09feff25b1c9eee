// A standby joins an active that holds a large table while clients churn on it: the snapshot
// is streamed a slice per turn (server/cluster/snapshot-walk.ts), so the active keeps serving
// and heartbeating through the join. The standby ends with the active's table (every holder
// with its claim id and token, every queue length), no failover happens, the active never
// steps out, and the churning clients see only grants and OKs.
import { describe, expect, it } from 'vitest';
import type { LockSummary, LocksPage } from '../../lib/ops-api/api-types.ts';
import { type ApiReply, type NodeProcess, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { fillLocks, startChurn } from '../testing/lock-load.ts';

const LOCKS = 200_000;

/** Every lock the node shows, as "name claimId/token queueLength", in name order. */
async function allLocks(node: NodeProcess): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const reply: ApiReply<LocksPage> = await node.api<LocksPage>(
      `/api/v1/locks?limit=1000${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      {},
      10_000,
    );
    if (reply.status !== 200) throw new Error(`node ${node.id}: GET /api/v1/locks answered ${reply.status}`);
    for (const l of reply.body.locks) out.push(summary(l));
    cursor = reply.body.nextCursor;
  }
  return out;
}

const summary = (l: LockSummary): string => `${l.name} ${l.holder === null ? '-' : `${l.holder.claimId}/${l.holder.token}`} ${l.queueLength}`;

describe('a standby joining a large table', () => {
  it(`joins an active holding ${LOCKS} locks under churn: in sync with identical holders and tokens, no failover, the active never steps out`, {
    timeout: 180_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2, start: ['a'], teardownGraceMs: 3_000 });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a to promote alone' });
    await fillLocks(a.ports.lock, LOCKS);
    const churn = await startChurn(a.ports.lock, 2_000);
    cluster.defer(() => churn.stop());

    const failoversBefore = (await a.cluster()).failovers;
    const phases = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        phases.add((await a.cluster()).phase);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await b.start();
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.inSync === true, { timeoutMs: 90_000, what: 'b in sync' });
    // Churn on while in sync: the stream after the snapshot carries it.
    await new Promise((r) => setTimeout(r, 1_000));
    const churned = await churn.stop();
    watching = false;
    await watcher;

    expect(churned.unexpected, 'the churning clients saw only grants and OKs').toEqual([]);
    expect(churned.handoverMs.length, 'handovers happened during the join').toBeGreaterThan(100);
    expect([...phases], 'a stayed active throughout').toEqual(['active']);
    const steppedOut = a
      .logEntries()
      .filter((e) => /stepping out|frozen longer|too far apart/.test(String(e.msg)))
      .map((e) => `${String(e.msg)} (gap ${String(e.gapMs ?? e.frozenMs)} ms)`);
    expect(steppedOut.join('; '), 'the active never stepped out nor held its grants').toBe('');
    const synced = b.logEntries().filter((e) => e.msg === 'synced from the active node');
    expect(synced.length).toBeGreaterThanOrEqual(1);
    expect(Number(synced.at(-1)?.parts), 'the snapshot came in many parts').toBeGreaterThan(10);
    const streamed = a.logEntries().filter((e) => e.msg === 'snapshot streamed to a standby');
    expect(streamed.at(-1)?.parts, 'the active logs the stream it sent').toBe(synced.at(-1)?.parts);
    // One loop-delay figure per second the node has lived: a fast join can end before a's sixth second.
    await waitFor(async () => ((await a.cluster()).loopDelayMs?.length ?? 0) > 5, { timeoutMs: 10_000, what: 'six seconds of loop-delay figures on a' });
    const [viewA, viewB] = [await a.cluster(), await b.cluster()];
    expect(viewA.loopDelayMs?.length, 'per-second loop delays in the view').toBeGreaterThan(5);
    expect(viewA.gcPauseMs?.length, 'a GC pause figure for each of those seconds').toBe(viewA.loopDelayMs?.length);
    expect(viewA.failovers, 'no failover during the join').toEqual(failoversBefore);
    expect([viewA.phase, viewB.phase]).toEqual(['active', 'standby']);

    // The same table on both, once the last churn events have reached b.
    const expected = await allLocks(a);
    expect(expected.length).toBeGreaterThanOrEqual(LOCKS);
    await waitFor(
      async () => {
        const mirrored = await allLocks(b);
        return mirrored.length === expected.length && mirrored.every((l, i) => l === expected[i]);
      },
      { timeoutMs: 20_000, what: 'b to show the same table' },
    );
    expect(await allLocks(b)).toEqual(expected);
  });
});
