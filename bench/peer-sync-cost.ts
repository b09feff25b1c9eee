// `node --import tsx bench/peer-sync-cost.ts`: what a standby's re-sync and a handoff cost over
// the peer link, with real `baton serve` processes on loopback (the machine's other load shares
// the cores). A 2-node cluster; `--locks` held locks on the active; then, `--repeats` times:
//   1. kill -9 of the standby and a restart: the time from its "following the active node" to its
//      "synced from the active node" log line (snapshot sent, received, applied);
//   2. a handoff by the API (a -> b, then restore and back): the gap the successor reports.
// Usage: node --import tsx bench/peer-sync-cost.ts [-- --locks 100000 --repeats 3]
import { connect } from 'node:net';
import type { ClusterView } from '../lib/ops/api-types.ts';
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

function lastTime(node: NodeProcess, msg: string): number {
  const e = node.logEntries().filter((x) => x.msg === msg).at(-1);
  return e === undefined ? Number.NaN : Number(e.time);
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
    await b.restart();
    await waitFor(async () => {
      const v = await a.cluster();
      return v.nodes.find((n) => n.id === 'b')?.inSync === true;
    }, { timeoutMs: 60_000, what: 'b in sync' });
    syncs.push(lastTime(b, 'synced from the active node') - lastTime(b, 'following the active node'));
    const handed = await a.post('/api/v1/cluster/handoff', { target: 'b' });
    if (handed.status !== 200) throw new Error(`handoff answered ${handed.status}`);
    const view = await waitFor(async () => {
      const v: ClusterView = await b.cluster();
      return v.phase === 'active' ? v : undefined;
    }, { timeoutMs: 20_000, what: 'b active' });
    gaps.push(view.failovers.at(-1)?.gapMs ?? Number.NaN);
    await b.post('/api/v1/cluster/restore', {});
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 60_000, what: 'a active again' });
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.inSync === true, { timeoutMs: 60_000, what: 'b in sync again' });
  }
  console.log(JSON.stringify({ locks, repeats, resyncMs: syncs, resyncMedianMs: round(median(syncs)), handoffGapMs: gaps, handoffGapMedianMs: round(median(gaps)) }));
} finally {
  await cluster.close();
}
