// Section 4: failover on three `baton serve` nodes on loopback (peer-timeout 1 s): per round,
// API handoff a -> b, API handoff b -> c, SIGTERM of c (a signal handoff), then kill -9 of the
// active. Figures: the gap with no active node that the successor records for each handoff and
// for the kill -9 promotion (last heartbeat heard -> promoted), and the kill -9 promotion as a
// client sees it (kill -> a standby reports itself active, polled every 10 ms).
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import { type Cluster, startCluster, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import { median, round } from '../stats.ts';

export const PEER_TIMEOUT_MS = 1_000;

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export interface FailoverResult {
  peerTimeoutMs: number;
  killPromotionMs: Spread;
  killGapMs: Spread;
  apiHandoffGapMs: Spread;
  sigtermHandoffGapMs: Spread;
  /**
   * Each graceful handoff's gap split as the successor logs it ('took over by handoff'): the old
   * active's part (holding its clients, shipping its last events) and the successor's promotion
   * (dropping what cannot move, storing a token block, serving).
   */
  handoffSplitMs: { pausedMs: Spread; promoteMs: Spread };
}

async function activeIs(cluster: Cluster, id: string, via: string): Promise<ClusterView> {
  return waitFor(
    async () => {
      const v = await cluster.node(via).cluster();
      return v.active === id && v.phase !== undefined ? v : null;
    },
    { timeoutMs: 10_000, what: `${id} active` },
  );
}

export async function failoverSection(repeats: number): Promise<FailoverResult> {
  const killPromotionMs: number[] = [];
  const killGapMs: number[] = [];
  const apiGapMs: number[] = [];
  const sigtermGapMs: number[] = [];
  const pausedMs: number[] = [];
  const promoteMs: number[] = [];
  for (let i = 0; i < repeats; i++) {
    process.stderr.write(`bench: failover round ${i + 1}/${repeats}\n`);
    const cluster = await startCluster({ nodes: 3, peerTimeoutMs: PEER_TIMEOUT_MS });
    try {
      await waitSettled(cluster, 'a');
      // API handoffs a -> b -> c, each gap as the successor measured it.
      for (const [from, to] of [
        ['a', 'b'],
        ['b', 'c'],
      ] as const) {
        const reply = await cluster.node(from).post<{ handoff: { gapMs: number } }>('/api/v1/cluster/handoff', { target: to });
        if (reply.status !== 200) throw new Error(`handoff ${from} -> ${to}: ${reply.status} ${JSON.stringify(reply.body)}`);
        const v = await activeIs(cluster, to, to);
        apiGapMs.push(v.failovers.at(-1)?.gapMs ?? Number.NaN);
        await waitSettled(cluster, to);
      }
      // SIGTERM of the active (c): a standby takes over by a signal handoff.
      await cluster.node('c').sigterm();
      const afterTerm = await waitFor(
        async () => {
          const v = await cluster.node('a').cluster();
          const last = v.failovers.at(-1);
          return last?.cause === 'signal' ? last : null;
        },
        { timeoutMs: 10_000, what: 'the signal handoff' },
      );
      sigtermGapMs.push(afterTerm.gapMs);
      const survivor = afterTerm.to;
      const other = survivor === 'a' ? 'b' : 'a';
      await waitFor(async () => ((await cluster.node(other).cluster()).phase === 'standby' ? true : null), { timeoutMs: 10_000, what: `${other} standby` });
      // kill -9 of the active: time until the standby reports itself active.
      await cluster.node(survivor).kill9();
      const t0 = performance.now();
      const v = await waitFor(
        async () => {
          const view = await cluster.node(other).cluster();
          return view.phase === 'active' ? view : null;
        },
        { timeoutMs: 10_000, intervalMs: 10, what: `${other} promoted` },
      );
      killPromotionMs.push(round(performance.now() - t0, 1));
      killGapMs.push(v.failovers.at(-1)?.gapMs ?? Number.NaN);
      for (const n of cluster.nodes) {
        for (const e of n.logEntries()) {
          if (e.msg !== 'took over by handoff') continue;
          pausedMs.push(Number(e.pausedMs));
          promoteMs.push(Number(e.promoteMs));
        }
      }
    } finally {
      await cluster.close();
    }
  }
  const summary = (xs: number[]): Spread => ({ median: round(median(xs), 1), min: round(Math.min(...xs), 1), max: round(Math.max(...xs), 1), n: xs.length });
  return {
    peerTimeoutMs: PEER_TIMEOUT_MS,
    killPromotionMs: summary(killPromotionMs),
    killGapMs: summary(killGapMs),
    apiHandoffGapMs: summary(apiGapMs),
    sigtermHandoffGapMs: summary(sigtermGapMs),
    handoffSplitMs: { pausedMs: summary(pausedMs), promoteMs: summary(promoteMs) },
  };
}
