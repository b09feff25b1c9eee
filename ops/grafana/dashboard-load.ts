// Load on a test cluster's active node that makes every kind of series the dashboard draws move:
// grants and releases with queued handovers (the keyed churn), expiries with a waiter handed the
// lock by the expiry, session holds handed over when their connection closes, and admin
// force-releases with a waiter behind. It runs until stopped, so rates over the last interval
// stay non-zero while the dashboard's queries are evaluated.
import type { Cluster } from '../../server/testing/cluster-harness.ts';
import { startChurn } from '../../server/testing/lock-load.ts';

export interface DashboardLoad {
  /** Stops the loops; resolves once they have ended. Errors the loops met are in `errors`. */
  stop(): Promise<void>;
  readonly errors: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startDashboardLoad(cluster: Cluster, active: string): Promise<DashboardLoad> {
  const node = cluster.node(active);
  const churn = await startChurn(node.ports.lock, 100, 20, 'dashboard/churn');
  const keyed = cluster.keyedClient([active]);
  const sessions = cluster.sessionClient([active], { resumable: true });
  const errors: string[] = [];
  let running = true;
  const loop = async (what: string, round: (i: number) => Promise<void>): Promise<void> => {
    for (let i = 0; running; i++) {
      try {
        await round(i);
      } catch (error) {
        errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
        await sleep(100);
      }
    }
  };
  const loops = [
    // Two takers of one key with a 100 ms lease and no release: the first expires and hands the lock to the second, which expires too.
    loop('expiries', async (i) => {
      const key = `dashboard/expiry/${i % 4}`;
      await Promise.all([keyed.acquire(key, { lease: 100, wait: 3_000 }), keyed.acquire(key, { lease: 100, wait: 3_000 })]);
      await sleep(150);
    }),
    // Two sessions on one name: the second queues and is handed the lock when the first's connection closes.
    loop('sessions', async (i) => {
      const name = `dashboard/session/${i % 4}`;
      const hold = () => sessions.hold(name, { lease: 2_000, wait: 3_000 }, () => sleep(30));
      await Promise.all([hold(), hold()]);
    }),
    // A held lock with a waiter, force-released by an admin: a force-release handover.
    loop('force-releases', async (i) => {
      const key = `dashboard/forced/${i % 4}`;
      await keyed.acquire(key, { lease: 10_000, wait: 3_000 });
      const waiter = keyed.acquire(key, { lease: 100, wait: 3_000 });
      await sleep(20);
      const reply = await node.post(`/api/v1/locks/${encodeURIComponent(key)}/force-release`, {});
      if (reply.status !== 200) throw new Error(`force-release answered ${reply.status}: ${JSON.stringify(reply.body)}`);
      await waiter;
      await sleep(200);
    }),
  ];
  return {
    errors,
    async stop() {
      running = false;
      await Promise.all(loops);
      const result = await churn.stop();
      errors.push(...result.unexpected.map((line) => `churn: ${line}`));
    },
  };
}
