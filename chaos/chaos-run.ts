// One chaos run: a three-node cluster on loopback (peer links through fault proxies; in etcd
// mode also a three-member etcd, each node reaching it through fault proxies of its own), the
// protected resource, 20 clients in 4 worker processes, and the seeded fault schedule applied in
// order, each fault undone and the cluster let settle before the next. Afterwards the clients are
// stopped, the leases left to run out, and the history handed to the checker. Used by the CLI
// (chaos/run.ts) and by the test (chaos/chaos.test.ts).
import type { LocksPage } from '../lib/ops-api/api-types.ts';
import { startCluster, waitFor, type Cluster } from '../server/testing/cluster-harness.ts';
import { EtcdCluster } from '../server/testing/etcd-cluster.ts';
import { ClientPool } from './client-pool.ts';
import { applyFault, settle } from './fault-injector.ts';
import { describeFault, faultSchedule, type ScheduledFault } from './fault-schedule.ts';
import { checkHistory, type Verdict } from './history-checker.ts';
import { type FaultWindow, type FinalState, type History, now } from './history.ts';
import { ProtectedResource } from './protected-resource.ts';

export interface ChaosOptions {
  seed: number;
  durationMs: number;
  /** Lease of every client (keyed fixed, session sliding); 2,000 ms if not given. */
  leaseMs?: number;
  /** --peer-timeout; 1,000 ms if not given. */
  peerTimeoutMs?: number;
  /** Fail the run on a session claim lost to a planned handoff (see CheckOptions); off if not given. */
  requireSessionCarryover?: boolean;
  /** Progress lines (faults as they are applied); silent if not given. */
  log?: (line: string) => void;
  /** Called with the cluster as soon as it exists (a test registers teardown with it). */
  onCluster?: (cluster: Cluster) => void;
  /**
   * 'etcd': the nodes run `--coordination etcd` on a three-member etcd started for the run, each
   * through its own fault proxies; the schedule adds the etcd faults and the checker excuses no
   * fault window. 'peers' (the default mode) if not given.
   */
  coordination?: 'peers' | 'etcd';
  /** etcd mode: --etcd-lease-ttl in whole seconds; 2 if not given. */
  etcdLeaseTtlS?: number;
}

export interface ChaosResult {
  seed: number;
  schedule: ScheduledFault[];
  applied: string[];
  /** Faults after which the cluster did not settle within the bound. */
  unsettled: string[];
  verdict: Verdict;
  /** Whether a session claim lost to a planned handoff failed the run. */
  requireSessionCarryover: boolean;
  history: History;
  /** Wall time of the whole run, setup and teardown included. */
  elapsedMs: number;
  /** Every node's whole log (all its runs), taken before teardown, by node id. */
  nodeLogs: Record<string, string>;
}

const LOCKS = ['chaos/0', 'chaos/1', 'chaos/2', 'chaos/3'];
const GROUPS = 4;
const CLIENTS_PER_GROUP = 5;

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const startedAt = performance.now();
  const leaseMs = options.leaseMs ?? 2_000;
  const peerTimeoutMs = options.peerTimeoutMs ?? 1_000;
  const log = options.log ?? (() => undefined);
  const etcdMode = options.coordination === 'etcd';
  const leaseTtlS = options.etcdLeaseTtlS ?? 2;
  const coordination = etcdMode ? ({ mode: 'etcd', leaseTtlMs: leaseTtlS * 1_000 } as const) : undefined;
  const schedule = faultSchedule({
    seed: options.seed,
    durationMs: options.durationMs,
    leaseMs,
    clientGroups: GROUPS,
    peerTimeoutMs,
    ...(coordination === undefined ? {} : { etcd: { leaseTtlMs: coordination.leaseTtlMs } }),
  });
  const resource = await ProtectedResource.start();
  let etcd: EtcdCluster | undefined;
  let cluster: Cluster | undefined;
  let pool: ClientPool | undefined;
  try {
    if (etcdMode) etcd = await EtcdCluster.start();
    // A short priority-return hold-down (the default is 10 s): the run settles on the highest-priority
    // node after each fault, and a 20 s run would otherwise spend most of its time waiting.
    cluster = await startCluster({
      nodes: 3,
      proxied: true,
      peerTimeoutMs,
      extraArgs: ['--return-hold-down', '1s'],
      ...(etcd === undefined ? {} : { etcd: { cluster: etcd, prefix: `baton/chaos-${options.seed}`, leaseTtlS } }),
    });
    // Whoever tears the cluster down (a test's teardown, the CLI on Ctrl-C) stops the rest with it.
    const started = etcd;
    if (started !== undefined) cluster.defer(() => started.close());
    cluster.defer(() => resource.close());
    cluster.defer(() => pool?.close());
    options.onCluster?.(cluster);
    const first = await settle(cluster);
    if ('error' in first) throw new Error(`the cluster did not settle at start: ${first.error}`);
    pool = new ClientPool({
      groups: GROUPS,
      clientsPerGroup: CLIENTS_PER_GROUP,
      lockAddresses: cluster.lockAddresses(),
      sessionAddresses: cluster.sessionAddresses(),
      resourceUrl: resource.url,
      locks: LOCKS,
      leaseMs,
      waitMs: 3_000,
      seed: options.seed,
      longSessionHolds: etcdMode,
    });
    await pool.start();
    const runStart = now();
    log(`clients started; ${schedule.length} faults scheduled over ${options.durationMs} ms`);
    const faults: FaultWindow[] = [];
    const applied: string[] = [];
    const unsettled: string[] = [];
    for (const fault of schedule) {
      const wait = runStart + fault.at - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (now() - runStart > options.durationMs - 2_000) {
        applied.push(`${describeFault(fault)}: skipped, the run is nearly over`);
        continue;
      }
      const appliedAt = now();
      const result = await applyFault(fault, cluster, pool, etcd);
      faults.push(...result.windows);
      const settled = await settle(cluster);
      const line = `+${((appliedAt - runStart) / 1000).toFixed(1)}s ${result.description}; ${'error' in settled ? `NOT SETTLED: ${settled.error}` : `settled, ${settled.active} active`}`;
      if ('error' in settled) unsettled.push(line);
      applied.push(line);
      log(line);
    }
    const left = runStart + options.durationMs - now();
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    await pool.stop(15_000);
    const runEnd = now();
    log('clients stopped');
    const final = await finalState(cluster, leaseMs);
    const view =
      final.active === null
        ? null
        : await cluster
            .node(final.active)
            .cluster()
            .catch(() => null);
    const history: History = {
      clientEvents: pool.events,
      writes: resource.writes,
      faults,
      failovers: view?.failovers ?? [],
      final,
      maxLeaseMs: leaseMs,
      peerTimeoutMs,
      runStart,
      runEnd,
      ...(coordination === undefined ? {} : { coordination }),
    };
    const nodeLogs = Object.fromEntries(cluster.nodes.map((n) => [n.id, `${n.tail(0)}\n${n.logs()}`]));
    if (etcd !== undefined) nodeLogs.etcd = etcd.dumpLogs();
    return {
      seed: options.seed,
      schedule,
      applied,
      unsettled,
      requireSessionCarryover: options.requireSessionCarryover ?? true,
      verdict: checkHistory(history, { requireSessionCarryover: options.requireSessionCarryover ?? true }),
      history,
      elapsedMs: performance.now() - startedAt,
      nodeLogs,
    };
  } finally {
    await pool?.close();
    await cluster?.close();
    await etcd?.close();
    await resource.close();
  }
}

/**
 * The active node's locks once the clients are gone: waits (bounded: the lease plus 3 s) for every
 * lock to be free with an empty queue, and returns what it saw last either way.
 */
async function finalState(cluster: Cluster, leaseMs: number): Promise<FinalState> {
  const settled = await settle(cluster);
  if ('error' in settled) return { active: null, locks: [], error: settled.error };
  const node = cluster.node(settled.active);
  let last: FinalState = { active: settled.active, locks: [], error: 'never read' };
  try {
    await waitFor(
      async () => {
        const reply = await node.api<LocksPage>('/api/v1/locks?limit=1000');
        if (reply.status !== 200) throw new Error(`GET /api/v1/locks answered ${reply.status}`);
        const locks = reply.body.locks.map((l) => ({
          name: l.name,
          holder: l.holder === null ? null : `${l.holder.protocol} ${l.holder.client} token ${l.holder.token}`,
          queueLength: l.queueLength,
        }));
        last = { active: settled.active, locks };
        return locks.every((l) => l.holder === null && l.queueLength === 0);
      },
      { timeoutMs: leaseMs + 3_000, intervalMs: 100, what: 'every lock free' },
    );
  } catch {
    // `last` holds what was left: the checker reports it.
  }
  return last;
}
