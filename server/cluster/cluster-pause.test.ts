// A node whose process is frozen (SIGSTOP for 2.5 s, peer timeout 1 s) and then runs again.
// A frozen active must not override the standby that took over meanwhile: it steps out of the
// role, re-syncs, and may take the role back by priority only with the lock table the other
// node built (a lock granted while it was frozen is kept, and no split brain is recorded), after
// the priority-return hold-down (2 s here; the default's 10 s is cluster-pause-return.test.ts's). A
// frozen standby must not promote itself when it wakes up to a silence that was its own.
import { describe, expect, it } from 'vitest';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import {
  checkSettled,
  holderOn,
  startCluster,
  timeline,
  waitFor,
  waitReplicated,
  waitSettled,
  type Cluster,
  type NodeProcess,
} from '../testing/cluster-harness.ts';

const LEASE_MS = 30_000;
const PAUSE_MS = 2_500;
const RETURN_HOLD_DOWN_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The node's own phase, or 'no answer' (a frozen node does not answer). */
async function phaseOf(node: NodeProcess, timeoutMs = 400): Promise<string> {
  try {
    const reply = await node.api<ClusterView>('/api/v1/cluster', {}, timeoutMs);
    return reply.status === 200 ? reply.body.phase : `status ${reply.status}`;
  } catch {
    return 'no answer';
  }
}

/** Every ~50 ms until `ms` passed, the phase of each given node: one "a=active b=standby" line per round. */
async function samplePhases(nodes: NodeProcess[], ms: number): Promise<string[]> {
  const rounds: string[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const phases = await Promise.all(nodes.map((n) => phaseOf(n)));
    rounds.push(nodes.map((n, i) => `${n.id}=${phases[i]}`).join(' '));
    await sleep(50);
  }
  return rounds;
}

/** Freezes `node` now; the test's teardown resumes it if the test did not. */
function freeze(cluster: Cluster, node: NodeProcess): number {
  cluster.defer(() => {
    if (node.stopped) node.signal('SIGCONT');
  });
  node.signal('SIGSTOP');
  return performance.now();
}

function logMessages(node: NodeProcess): string[] {
  return node.logEntries().map((e) => String(e.msg));
}

describe('a frozen active node', () => {
  it('does not override the standby that took over: the lock granted meanwhile is kept, and no split brain', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ extraArgs: ['--return-hold-down', `${RETURN_HOLD_DOWN_MS}ms`] });
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];
    const onA = cluster.keyedClient(['a', 'b', 'c']);
    const first = await onA.acquire('pause-first', { lease: LEASE_MS });
    await waitReplicated(cluster, 'pause-first', first.token, ['b', 'c']);

    const stoppedAt = freeze(cluster, a);
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: PAUSE_MS - 300, what: 'b to promote while a is frozen' });
    console.log(`b promoted ${Math.round(performance.now() - stoppedAt)} ms after a was frozen`);
    const onB = cluster.keyedClient(['b']);
    const second = await onB.acquire('pause-second', { lease: LEASE_MS, wait: 1_000 });
    expect(second.token).toBeGreaterThan(first.token);
    expect((await holderOn(b, 'pause-first'))?.token).toBe(first.token.toString());
    expect(performance.now() - stoppedAt, 'b granted before a woke up').toBeLessThan(PAUSE_MS);

    await sleep(stoppedAt + PAUSE_MS - performance.now());
    a.signal('SIGCONT');
    const resumedAt = performance.now();

    // Settled: exactly one active, every running node an in-sync standby of it, both locks on it.
    const settledOn = await waitFor(
      async () => {
        const actives = (await Promise.all(cluster.nodes.map(async (n) => ((await phaseOf(n, 1_000)) === 'active' ? n.id : null)))).filter((id) => id !== null);
        if (actives.length !== 1) throw new Error(`actives: ${JSON.stringify(actives)}`);
        const active = actives[0] as string;
        await checkSettled(cluster, active);
        const node = cluster.node(active);
        const held = [await holderOn(node, 'pause-first'), await holderOn(node, 'pause-second')].map((h) => h?.token);
        if (held[0] !== first.token.toString() || held[1] !== second.token.toString()) throw new Error(`${active} holds ${JSON.stringify(held)}`);
        return active;
      },
      { timeoutMs: 3_500, what: 'one active holding both locks, with in-sync standbys' },
    );
    console.log(`after SIGCONT: settled on ${settledOn} in ${Math.round(performance.now() - resumedAt)} ms`);

    // The documented end: a, not yielded, takes the role back by a graceful handoff once it has
    // been an in-sync standby for the hold-down.
    const view = await waitFor(
      async () => {
        await checkSettled(cluster, 'a');
        return a.cluster();
      },
      { timeoutMs: RETURN_HOLD_DOWN_MS + 3_000, what: 'a to take the role back by priority with in-sync standbys' },
    );
    console.log(`a active again ${Math.round(performance.now() - resumedAt)} ms after SIGCONT; timeline ${JSON.stringify(timeline(view))}`);
    expect((await holderOn(a, 'pause-first'))?.token).toBe(first.token.toString());
    expect((await holderOn(a, 'pause-second'))?.token).toBe(second.token.toString());
    for (const node of [a, b, c]) {
      const seen = timeline(await node.cluster());
      expect(
        seen.filter((f) => f.includes('split-brain')),
        `${node.id}'s timeline ${JSON.stringify(seen)}`,
      ).toEqual([]);
    }
    expect(timeline(view)).toEqual(['a->b crash', 'b->a priority-return']);
    expect(logMessages(a).some((m) => m.includes('frozen longer than the peer timeout'))).toBe(true);
    expect(logMessages(b).filter((m) => m.startsWith('split brain'))).toEqual([]);

    // Both holders can still release, at the node that is active now.
    expect(await onA.release('pause-first', first.token)).toBe(true);
    expect(await onA.release('pause-second', second.token)).toBe(true);
  });
});

describe('a frozen standby', () => {
  it('does not promote itself when it runs again: a stays active throughout, no failover, and it re-syncs', { timeout: 30_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];
    const keyed = cluster.keyedClient(['a']);
    const before = await keyed.acquire('pause-standby-before', { lease: LEASE_MS });
    await waitReplicated(cluster, 'pause-standby-before', before.token, ['b', 'c']);

    const stoppedAt = freeze(cluster, c);
    const during = await keyed.acquire('pause-standby-during', { lease: LEASE_MS });
    const whileFrozen = await samplePhases([a, b], stoppedAt + PAUSE_MS - performance.now());
    c.signal('SIGCONT');
    const resumedAt = performance.now();
    const afterwards = await samplePhases([a, b, c], 3_000);

    expect(
      whileFrozen.filter((round) => round !== 'a=active b=standby'),
      'while c was frozen',
    ).toEqual([]);
    // c may be heard as 'discovering' or 'syncing' while it listens again, never promoting or active.
    const bad = afterwards.filter((round) => !round.startsWith('a=active b=standby c=') || /c=(active|promoting|handing-off)/.test(round));
    expect(bad, 'after c woke up').toEqual([]);
    console.log(`c after SIGCONT went through: ${[...new Set(afterwards.map((r) => r.split(' ')[2]))].join(' → ')}`);

    const tookMs = await waitSettled(cluster, 'a', 3_000);
    console.log(`settled ${Math.round(performance.now() - resumedAt)} ms after SIGCONT (${Math.round(tookMs)} ms after the sampling)`);
    expect((await holderOn(c, 'pause-standby-before'))?.token).toBe(before.token.toString());
    expect((await holderOn(c, 'pause-standby-during'))?.token).toBe(during.token.toString());
    for (const node of [a, b, c]) expect(timeline(await node.cluster()), `${node.id}'s timeline`).toEqual([]);
    expect(logMessages(c).some((m) => m.includes('frozen longer than the peer timeout'))).toBe(true);
    expect(logMessages(c).filter((m) => m.startsWith('promoted'))).toEqual([]);
  });
});
