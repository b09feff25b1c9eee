// kill -9 of an active holding a large table: a 2-node cluster (peer-timeout 1 s), `a` alone takes
// `locks` locks (600 s leases), `b` joins and syncs, then `a` is killed with SIGKILL. Figures: the
// kill to b reporting itself active (polled every 10 ms, as the failover section does), the gap b
// records (last heartbeat heard to promoted), and how many held locks b serves afterwards
// (GET /api/v1/stats: every one of `locks` should be kept).
import type { StatsView } from '../lib/ops-api/api-types.ts';
import { startCluster, waitFor } from '../server/testing/cluster-harness.ts';
import { fillLocks } from '../server/testing/lock-load.ts';
import { PEER_TIMEOUT_MS } from './sections/failover-section.ts';
import { round } from './stats.ts';

export interface TableFailover {
  locks: number;
  peerTimeoutMs: number;
  fillSeconds: number;
  joinSeconds: number;
  killPromotionMs: number;
  killGapMs: number;
  locksKept: number;
}

export async function tableFailover(locks: number): Promise<TableFailover> {
  const cluster = await startCluster({ nodes: 2, start: ['a'], peerTimeoutMs: PEER_TIMEOUT_MS, teardownGraceMs: 5_000, startTimeoutMs: 30_000 });
  try {
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitFor(async () => (await a.cluster()).phase === 'active', { timeoutMs: 15_000, what: 'a active alone' });
    const fill0 = performance.now();
    await fillLocks(a.ports.lock, locks, 'scale/failover');
    const fillSeconds = round((performance.now() - fill0) / 1_000, 1);
    const join0 = performance.now();
    await b.start();
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.inSync === true, { timeoutMs: 300_000, intervalMs: 50, what: 'b in sync' });
    const joinSeconds = round((performance.now() - join0) / 1_000, 1);
    // Let the join's garbage settle on both sides: the kill should meet a standby at rest.
    await new Promise((r) => setTimeout(r, 3_000));
    await a.kill9();
    const t0 = performance.now();
    const view = await waitFor(
      async () => {
        const v = await b.cluster().catch(() => null);
        return v?.phase === 'active' ? v : null;
      },
      { timeoutMs: 60_000, intervalMs: 10, what: 'b promoted' },
    );
    const killPromotionMs = round(performance.now() - t0, 1);
    const stats = await b.api<StatsView>('/api/v1/stats', {}, 30_000);
    if (stats.status !== 200) throw new Error(`GET /api/v1/stats on b answered ${stats.status}`);
    return {
      locks,
      peerTimeoutMs: PEER_TIMEOUT_MS,
      fillSeconds,
      joinSeconds,
      killPromotionMs,
      killGapMs: view.failovers.at(-1)?.gapMs ?? Number.NaN,
      locksKept: stats.body.held,
    };
  } finally {
    await cluster.close();
  }
}
