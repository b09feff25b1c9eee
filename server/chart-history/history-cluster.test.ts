// The charts' past across a handoff, a restart and a failover, with real `baton serve` processes
// (issue 30). A standby records the replicated events as the active records its own, so a new
// active shows the same past; every node keeps its history in its data dir, so a restarted node
// shows it again.
import { describe, expect, it } from 'vitest';
import type { ClusterView, HistoryBucket, LockHistory, StatsHistory } from '../../lib/ops-api/api-types.ts';
import { type Cluster, type NodeProcess, startCluster, waitFor, waitReplicated, waitSettled } from '../testing/cluster-harness.ts';

const HOLD_MS = 300;
const LOCKS = 4;
const ROUNDS = 3;

/** Contended locks (each waiter queues about HOLD_MS) and one expiry that blocks its waiter about a second. */
async function load(cluster: Cluster): Promise<void> {
  const holders = cluster.keyedClient(['a', 'b']);
  const waiters = cluster.keyedClient(['a', 'b']);
  const silent = cluster.keyedClient(['a', 'b']);
  await silent.acquire('chart-expiry', { lease: 1_000 }); // never released: it expires
  const blocked = waiters.acquire('chart-expiry', { lease: 5_000, wait: 10_000 });
  await Promise.all(
    Array.from({ length: LOCKS }, async (_, i) => {
      const name = `chart-${i}`;
      let held = await holders.acquire(name, { lease: 10_000 });
      for (let r = 0; r < ROUNDS; r++) {
        const next = waiters.acquire(name, { lease: 10_000, wait: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        await held.release();
        held = await next;
      }
      await held.release();
    }),
  );
  await (await blocked).release();
}

async function history(node: NodeProcess, range: '1h' | '24h'): Promise<StatsHistory> {
  const reply = await node.api<StatsHistory>(`/api/v1/stats/history?range=${range}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

/** The buckets that saw anything, by start: what "the same past" compares. */
function past(h: StatsHistory): HistoryBucket[] {
  return h.buckets.filter((b) => b.grants > 0 || b.hold.count > 0);
}

const GRANTS = 1 + LOCKS * (ROUNDS + 1) + 1;

async function activeView(cluster: Cluster, id: string): Promise<ClusterView> {
  return waitFor(
    async () => {
      const view = await cluster.node(id).cluster();
      return view.phase === 'active' ? view : undefined;
    },
    { timeoutMs: 10_000, what: `${id} to be active` },
  );
}

/** Waits until `node` has recorded every grant and hold of the load (a standby gets them by replication). */
function recorded(node: NodeProcess): Promise<StatsHistory> {
  return waitFor(
    async () => {
      const h = await history(node, '1h');
      return h.summary.grants === GRANTS && h.summary.hold.count === GRANTS ? h : undefined;
    },
    { timeoutMs: 5_000, what: `${node.id} to record the load` },
  );
}

describe('chart history across a role change and a restart', () => {
  it('a handoff: the new active shows what the old one did, every waiter counted as queued and the expiry as blocking about a second', {
    timeout: 60_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await load(cluster);
    const onA = await recorded(a);
    expect(onA.summary.queueWait.waited).toBe(LOCKS * ROUNDS + 1); // every waiter, not the first holder of each lock
    expect((await a.post('/api/v1/cluster/handoff', { target: 'b' })).status).toBe(200);
    await activeView(cluster, 'b');
    const onB = await recorded(b);
    // Counted alike: a standby's replicated grants were counted as never queued before the fix.
    expect(onB.summary.grants).toBe(onA.summary.grants);
    expect(onB.summary.queueWait.waited).toBe(onA.summary.queueWait.waited);
    expect(onB.summary.blocked.expiry.count).toBe(1);
    // The same waits within what replication adds (a few ms here, more on a loaded machine).
    for (const [x, y] of [
      [onA.summary.queueWait.waitedP50, onB.summary.queueWait.waitedP50],
      [onA.summary.blocked.expiry.p50, onB.summary.blocked.expiry.p50],
    ]) {
      expect(y).toBeGreaterThan((x ?? 0) * 0.8);
      expect(y).toBeLessThan((x ?? 0) * 1.2 + 50);
    }
    expect(onB.summary.blocked.expiry.p50).toBeGreaterThan(500);
  });

  it('a restart with the same data dir shows the same buckets, and so does the node that takes over after a kill -9', {
    timeout: 60_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await load(cluster);
    const before = { h1: await recorded(a), h24: await history(a, '24h') };
    expect(await a.sigterm()).toBe(0);
    await activeView(cluster, 'b');
    await a.restart();
    await waitSettled(cluster, 'b');
    expect(past(await history(a, '1h'))).toEqual(past(before.h1));
    expect(past(await history(a, '24h'))).toEqual(past(before.h24));
    expect(a.logEntries().some((e) => e.msg === 'chart history restored')).toBe(true);

    // b fails; a takes over and still shows the past it restored.
    await b.kill9();
    await activeView(cluster, 'a');
    expect(past(await history(a, '1h'))).toEqual(past(before.h1));
  });

  it('a grant held across two handoffs and two restores is one row in each node’s lock history, then its release', { timeout: 90_000 }, async () => {
    const cluster = await startCluster({ nodes: 2, extraArgs: ['--return-hold-down', '1000ms'] });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    const keyed = cluster.keyedClient(['a', 'b']);
    const held = await keyed.acquire('chart-carried', { lease: 60_000 });
    await waitReplicated(cluster, 'chart-carried', held.token, ['b']);
    const rows = async (node: NodeProcess) => {
      const reply = await node.api<LockHistory>('/api/v1/locks/chart-carried/history');
      return reply.body.grants.map((g) => [g.token, g.end]);
    };
    for (let round = 0; round < 2; round++) {
      expect((await a.post('/api/v1/cluster/handoff', { target: 'b' })).status).toBe(200);
      await activeView(cluster, 'b');
      await waitSettled(cluster, 'b');
      await waitReplicated(cluster, 'chart-carried', held.token, ['a']);
      expect((await b.post('/api/v1/cluster/restore', {})).status).toBe(200);
      await activeView(cluster, 'a');
      await waitSettled(cluster, 'a');
      await waitReplicated(cluster, 'chart-carried', held.token, ['b']);
    }
    // a stopped serving it twice, b once or twice: one failover row each, not one per step-down.
    expect(await rows(a)).toEqual([[held.token.toString(), 'failover']]);
    expect(await rows(b)).toEqual([[held.token.toString(), 'failover']]);
    expect(await keyed.release('chart-carried', held.token)).toBe(true);
    for (const node of [a, b]) {
      await waitFor(async () => ((await rows(node)).length === 1 && (await rows(node))[0]?.[1] === 'release' ? true : undefined), {
        timeoutMs: 5_000,
        what: `${node.id} to list the release in place of the failover row`,
      });
      expect(await rows(node)).toEqual([[held.token.toString(), 'release']]);
    }
  });
});
