// Load on a test cluster's active node that makes every kind of series the dashboard draws move:
// grants and releases with queued handovers (the keyed churn), expiries with a waiter handed the
// lock by the expiry, session holds handed over when their connection closes, a waiter timing
// out, an admin kick and an admin force-release with a waiter behind, and sign-ins throttled. It runs until stopped, so rates over the last interval
// stay non-zero while the dashboard's queries are evaluated.
import { LockTimeoutError } from '../../lib/client/index.ts';
import type { LockDetail } from '../../lib/ops-api/api-types.ts';
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
  // Keyed replies to one key come back in request order on a connection, so each waiter that
  // must end on its own (a timeout, a kick) queues from a connection of its own.
  const kickedClient = cluster.keyedClient([active]);
  const timeoutClient = cluster.keyedClient([active]);
  const sessions = cluster.sessionClient([active], { resumable: true });
  const errors: string[] = [];
  const admin = async (path: string): Promise<void> => {
    const reply = await node.post(path, {});
    if (reply.status !== 200) throw new Error(`POST ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  };
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
    // A held lock with three waiters: one gives up at its wait deadline, one is kicked by an admin, and the
    // last is handed the lock by an admin force-release.
    loop('admin actions', async (i) => {
      const key = `dashboard/forced/${i % 4}`;
      await keyed.acquire(key, { lease: 10_000, wait: 3_000 });
      const kicked = kickedClient.acquire(key, { lease: 100, wait: 3_000 }).then(
        () => 'granted',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      // The kicked waiter queues first: it is the one the kick below picks. Waited for, not slept
      // for: on a loaded machine 20 ms was not always enough, the kick took the next waiter, and
      // its rejection surfaced as an unhandled error (CI at cdcf134).
      for (let tries = 0; ; tries++) {
        const queued = (await node.api<LockDetail>(`/api/v1/locks/${encodeURIComponent(key)}`)).body.queue.length;
        if (queued >= 1) break;
        if (tries >= 300) throw new Error(`the waiter to kick never queued on ${key}`);
        await sleep(10);
      }
      const handedOver = keyed.acquire(key, { lease: 100, wait: 3_000 }).then(
        () => 'granted',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      const timedOut = await timeoutClient.acquire(key, { lease: 100, wait: 30 }).then(
        () => false,
        (error: unknown) => error instanceof LockTimeoutError,
      );
      if (!timedOut) throw new Error(`a 30 ms wait behind a held ${key} did not time out`);
      const first = (await node.api<LockDetail>(`/api/v1/locks/${encodeURIComponent(key)}`)).body.queue[0];
      if (first === undefined) throw new Error(`no waiter on ${key} to kick`);
      await admin(`/api/v1/locks/${encodeURIComponent(key)}/waiters/${encodeURIComponent(first.id)}/kick`);
      if ((await kicked) === 'granted') throw new Error(`the kicked waiter on ${key} was granted`);
      await admin(`/api/v1/locks/${encodeURIComponent(key)}/force-release`);
      const handed = await handedOver;
      if (handed !== 'granted') throw new Error(`the waiter behind the kicked one on ${key} was not handed the lock: ${handed}`);
      await sleep(200);
    }),
    // Sign-ins with a wrong token, past the limit of 10 a minute per address: answered 429.
    loop('sign-ins', async () => {
      await fetch(`http://${node.httpAddress}/api/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'not-the-admin-token-0123456789' }),
      });
      await sleep(500);
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
