// `node --import tsx bench/peer-sync-cost.ts`: what a standby's re-sync and a handoff cost over
// the peer link, with real `baton serve` processes on loopback (the machine's other load shares
// the cores). A 2-node cluster; `--locks` held locks on the active; then, `--repeats` times:
//   1. kill -9 of the standby and a restart: the time from its "following the active node" to its
//      "synced from the active node" log line (snapshot sent, received, applied);
//   2. then one handoff by the API (a -> b): the gap the successor reports.
// Usage: node --import tsx bench/peer-sync-cost.ts [-- --locks 100000 --repeats 3]
import { connect } from 'node:net';
import type { ClusterView } from '../lib/ops-api/api-types.ts';
import { startCluster, waitFor, waitSettled, type NodeProcess } from '../server/testing/cluster-harness.ts';
import { intFlag } from './flags.ts';
import { median, round } from './stats.ts';

const locks = intFlag('--locks', 100_000, 1_000_000);
const repeats = intFlag('--repeats', 3, 20);

/** Takes `count` locks on one pipelined connection (600 s leases); resolves when all are granted. */
function fill(port: number, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let granted = 0;
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      const chunk = 5_000;
      for (let i = 0; i < count; i += chunk) {
        let out = '';
        for (let j = i; j < Math.min(count, i + chunk); j++) out += `A sync-bench/${'k'.repeat(24)}/${j} 600 0\n`;
        socket.write(out);
      }
    });
    socket.on('data', (text: string) => {
      buffered += text;
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        if (!buffered.startsWith('A ')) reject(new Error(`unexpected reply ${buffered.slice(0, nl)}`));
        granted++;
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
      }
      if (granted === count) {
        socket.destroy();
        resolve();
      }
    });
    socket.on('error', reject);
  });
}

/** The first log entry of `node` at or after `since` (epoch ms) that `match` takes. */
function firstAfter(node: NodeProcess, since: number, match: (e: Record<string, unknown>) => boolean): Record<string, unknown> {
  const e = node.logEntries().find((x) => Number(x.time) >= since && match(x));
  if (e === undefined) throw new Error(`no such log line from ${node.id} since ${since}`);
  return e;
}

const cluster = await startCluster({ nodes: 2, teardownGraceMs: 3_000 });
try {
  const [a, b] = [cluster.node('a'), cluster.node('b')];
  await waitSettled(cluster, 'a');
  await fill(a.ports.lock, locks);
  const syncs: number[] = [];
  const gaps: number[] = [];
  for (let r = 0; r < repeats; r++) {
    await b.kill9();
    const since = Date.now();
    await b.restart();
    await waitFor(
      async () => {
        const v = await a.cluster();
        return v.nodes.find((n) => n.id === 'b')?.inSync === true;
      },
      { timeoutMs: 60_000, what: 'b in sync' },
    );
    // The first full snapshot, from the last "following" before it.
    const synced = firstAfter(b, since, (e) => e.msg === 'synced from the active node' && e.locks === locks);
    const followed = b
      .logEntries()
      .filter((e) => e.msg === 'following the active node' && Number(e.time) >= since && Number(e.time) <= Number(synced.time))
      .at(-1);
    if (followed === undefined) throw new Error('no "following" line before the sync');
    syncs.push(Number(synced.time) - Number(followed.time));
  }
  // One handoff at the end (a -> b): the gap the successor reports.
  const handed = await a.api('/api/v1/cluster/handoff', { method: 'POST', body: JSON.stringify({ target: 'b' }) }, 30_000);
  if (handed.status !== 200) throw new Error(`handoff answered ${handed.status}`);
  const view = await waitFor(
    async () => {
      const v: ClusterView = await b.cluster();
      return v.phase === 'active' ? v : undefined;
    },
    { timeoutMs: 30_000, what: 'b active' },
  );
  gaps.push(view.failovers.at(-1)?.gapMs ?? Number.NaN);
  const syncLines = b.logEntries().filter((e) => e.msg === 'synced from the active node' && e.locks === locks).length;
  console.log(
    JSON.stringify({
      locks,
      repeats,
      fullSnapshotsApplied: syncLines,
      resyncMs: syncs,
      resyncMedianMs: round(median(syncs)),
      handoffGapMs: gaps,
      handoffGapMedianMs: round(median(gaps)),
    }),
  );
} finally {
  await cluster.close();
}
