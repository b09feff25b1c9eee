// The alert rules against the real thing: Debian's prometheus (server/testing/prometheus-harness.ts)
// scraping a real three-node Baton cluster every second, evaluating the rules every second, while
// the test breaks the cluster the way production does. Prints a timeline of every alert going
// pending, firing and cleared after each fault (the figures of docs/operations.md, "Alerts").
//
// The rules loaded are the shipped baton-alerts.yml through one documented transform (rulesForTest
// below), so the expressions under test are the shipped ones:
// - every `for:` and range window divided by 15 (rounded up to whole seconds): the rules assume a
//   15 s scrape interval and this Prometheus scrapes every 1 s (`for: 1m` becomes 4 s, `for: 30s`
//   2 s, `[15m]` 60 s);
// - BatonLockHeldTooLong's threshold of 1800 s becomes 5 s, so that a hold can pass it in a test.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startCluster, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import { startChurn } from '../../server/testing/lock-load.ts';
import { startPrometheus } from '../../server/testing/prometheus-harness.ts';
import { AlertTimeline } from './alert-timeline.ts';
import { withDurationsScaled, withExprEdit } from './rules-text.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Production scrape interval / this test's. */
const TIME_SCALE = 15;
const HELD_THRESHOLD_S = 5;

function rulesForTest(shipped: string): string {
  return withExprEdit(withDurationsScaled(shipped, TIME_SCALE), 'BatonLockHeldTooLong', '> 1800', `> ${HELD_THRESHOLD_S}`);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the alert rules on a real Prometheus scraping a real cluster', () => {
  it('stay silent on a healthy cluster and a failover, and fire on no active node, a split brain and a stuck lock', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-alerts-live-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const rulesFile = join(dir, 'baton-alerts.yml');
    writeFileSync(rulesFile, rulesForTest(readFileSync(join(HERE, 'baton-alerts.yml'), 'utf8')));

    const cluster = await startCluster({ proxied: true });
    await waitSettled(cluster, 'a', 10_000);
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];
    const targets = cluster.nodes.map((n) => `127.0.0.1:${n.ports.http}`);
    const prometheus = await startPrometheus({ targets, rulesFiles: [rulesFile], scrapeIntervalSeconds: 1, evaluationIntervalSeconds: 1 });
    onTestFinished(() => prometheus.stop());
    const nodeOf = new Map(cluster.nodes.map((n) => [`127.0.0.1:${n.ports.http}`, n.id]));
    const timeline = new AlertTimeline(prometheus, (label, value) => (label === 'instance' ? (nodeOf.get(value) ?? value) : value));
    onTestFinished(async (context) => {
      await timeline.stop();
      console.log(`alert timeline (s since start; +s since the fault above):\n${timeline.format()}`);
      if (context.task.result?.state === 'fail') console.error(`prometheus log:\n${prometheus.log()}`);
    });
    await prometheus.waitForTargetsUp();
    timeline.mark('prometheus has scraped every node once');
    timeline.start();
    // Before the first scrapes, "no series" reads as no active node: wait for the first clean evaluation.
    await timeline.waitFor('BatonNoActiveNode', 'cleared', 10_000);
    expect(await prometheus.query('sum(baton_node_role{role="active"})')).toMatchObject([{ value: 1 }]);

    // 1. A healthy cluster under churn (handovers on 200 keys, queued waits included): a minute
    //    in which no alert fires.
    const quietFrom = timeline.mark('healthy cluster, churn of 300 acquire+release pairs/s for 60 s');
    const churn = await startChurn(a.ports.lock, 300, 200, 'live/churn');
    await pause(60_000);
    const churned = await churn.stop();
    const quietTo = timeline.elapsed();
    expect(churned.unexpected).toEqual([]);
    expect(churned.pairs).toBeGreaterThan(5_000);
    const loud = timeline.entries.filter((e) => e.state === 'firing' && e.at >= quietFrom && e.at <= quietTo);
    expect(loud, timeline.format()).toEqual([]);
    // The churn reached Prometheus: queued waits and holds were counted.
    const waits = await prometheus.query('sum(baton_queue_wait_seconds_count)');
    expect(waits[0]?.value ?? 0).toBeGreaterThan(1_000);

    // 2. A lock held past the threshold fires BatonLockHeldTooLong; its release clears it.
    const client = cluster.keyedClient(['a']);
    timeline.mark(`lock "stuck" held (threshold ${HELD_THRESHOLD_S} s)`);
    const stuck = await client.acquire('stuck', { lease: 120_000 });
    await timeline.waitFor('BatonLockHeldTooLong', 'firing', 30_000);
    timeline.mark('lock "stuck" released');
    expect(await client.release('stuck', stuck.token)).toBe(true);
    await timeline.waitFor('BatonLockHeldTooLong', 'cleared', 10_000);

    // 3. A split brain: a's peer links cut, b promotes while a stays active. The heal clears it.
    const cutAt = timeline.mark("split brain: a's peer links cut");
    a.proxy?.block();
    await timeline.waitFor('BatonSplitBrain', 'firing', 20_000);
    timeline.mark("split brain healed: a's peer links back");
    a.proxy?.heal();
    await timeline.waitFor('BatonSplitBrain', 'cleared', 20_000);
    expect(timeline.changes('BatonNoActiveNode', cutAt)).toEqual([]);
    await waitSettled(cluster, 'a', 20_000);

    // 4. kill -9 of the active with its standbys up: b takes over in about a peer timeout, well
    //    inside BatonNoActiveNode's `for:` (4 s here), so it may go pending but never fires.
    const killedAt = timeline.mark('kill -9 of the active a (b and c up)');
    await a.kill9();
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: cluster.peerTimeoutMs + 5_000, what: 'b to take over' });
    await pause(8_000);
    await timeline.poll();
    expect(
      timeline.changes('BatonNoActiveNode', killedAt).filter((e) => e.state === 'firing'),
      timeline.format(),
    ).toEqual([]);

    // 5. No node takes over: c frozen (SIGSTOP), then the active b killed. BatonNoActiveNode
    //    fires; c let run again takes over and clears it.
    timeline.mark('c frozen (SIGSTOP), kill -9 of the active b: nobody can take over');
    c.signal('SIGSTOP');
    await b.kill9();
    await timeline.waitFor('BatonNoActiveNode', 'firing', 30_000);
    timeline.mark('c let run (SIGCONT)');
    c.signal('SIGCONT');
    await timeline.waitFor('BatonNoActiveNode', 'cleared', 30_000);
    expect((await c.cluster()).phase).toBe('active');
    expect(timeline.failedPolls).toBeLessThan(5);
  });
});
