// Handoff and failover as the clients saw them, on real processes with hand-written clients that
// time their own stall: the timeline entry's `clients` figures (claims moved, expired, lost,
// re-sent and re-granted; the longest client stall) against what the clients measured, the same
// figures on every node (the old active too), and the /metrics series.
import { describe, expect, it } from 'vitest';
import type { FailoverView } from '../../lib/ops-api/api-types.ts';
import { LineClient } from '../testing/line-client.ts';
import { sample } from '../testing/metrics-text.ts';
import { type Cluster, holderOn, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';
import { type ClientStall, keyedWaiter, sessionClaim, stallMs, type TimedClient } from '../testing/transition-clients.ts';

/**
 * How far the reported stall may exceed the longest one a client measured (docs/cluster.md): the
 * daemon counts from the old active's last grant-capable moment, a client from when it learned of
 * the transition, which is after the gap (a handoff) or at the death (a crash, at most the gap
 * after the last line heard), plus the time the news took to reach it: allowed 500 ms on a
 * loaded two-core host.
 */
const NOTICE_MS = 500;
const LONG_LEASE_MS = 20_000;

async function queueLength(cluster: Cluster, id: string, name: string): Promise<number> {
  const reply = await cluster.node(id).api<{ queue: unknown[] }>(`/api/v1/locks/${encodeURIComponent(name)}`);
  return reply.status === 200 ? reply.body.queue.length : 0;
}

/** The entry with `id` on every running node, once each has it finished; they must be equal. */
async function finishedEverywhere(cluster: Cluster, ids: string[], entryId: string): Promise<FailoverView[]> {
  return waitFor(
    async () => {
      const entries = await Promise.all(ids.map(async (id) => (await cluster.node(id).cluster()).failovers.find((f) => f.id === entryId)));
      return entries.every((e) => e?.clients?.finishedAt != null) ? (entries as FailoverView[]) : undefined;
    },
    { timeoutMs: 20_000, what: `${entryId} finished on ${ids.join(', ')}` },
  );
}

async function metricsOf(cluster: Cluster, id: string): Promise<string> {
  const res = await fetch(`http://${cluster.node(id).httpAddress}/metrics`);
  return res.text();
}

/** A keyed holder (`A <name> 30 0` granted at once) on `id`: its grant moves with the table. */
async function keyedHolder(cluster: Cluster, id: string, name: string): Promise<LineClient> {
  const c = await LineClient.open(cluster.node(id).ports.lock);
  cluster.defer(() => c.close());
  c.send(`A ${name} 30 0`);
  expect(await c.next()).toMatch(new RegExp(`^A ${name} \\d+$`));
  return c;
}

/** A seed-protocol session (no claim key) holding `name` on `id`: a transition ends it. */
async function seedSession(cluster: Cluster, id: string, name: string): Promise<LineClient> {
  const c = await LineClient.open(cluster.node(id).ports.session);
  cluster.defer(() => c.close());
  c.send(`ACQUIRE ${name} ${LONG_LEASE_MS}`);
  expect(await c.next()).toMatch(/^ACQUIRED \d+$/);
  return c;
}

function track<T extends TimedClient>(cluster: Cluster, client: T): T {
  cluster.defer(() => client.close());
  return client;
}

describe('handoff and failover as the clients saw them', () => {
  it('API handoff: a claim that expires is counted expired, the longest stall covers what every client measured, and every node shows the same figures', {
    timeout: 90_000,
  }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const a = cluster.node('a');
    const toB = [cluster.node('b').sessionAddress];
    await keyedHolder(cluster, 'a', 'moves');
    await seedSession(cluster, 'a', 'seed');
    const holder = track(cluster, await sessionClaim('holder', 'held', LONG_LEASE_MS, a.sessionAddress, { resume: true, fallback: toB }));
    // The stuck lock: a claim whose client never comes back, and behind it a session waiter and two keyed waiters.
    const gone = track(cluster, await sessionClaim('gone', 'stuck', 4_000, a.sessionAddress, { resume: false, fallback: [] }));
    const waiter = track(
      cluster,
      await sessionClaim('waiter', 'stuck', LONG_LEASE_MS, a.sessionAddress, { resume: true, fallback: toB, releaseWhenGranted: true }),
    );
    expect([holder.first, gone.first, waiter.first]).toEqual([expect.stringMatching(/^ACQUIRED/), expect.stringMatching(/^ACQUIRED/), 'WAITING 1']);
    const keyed = [
      track(cluster, await keyedWaiter('keyed-1', 'stuck', a.lockAddress, [cluster.node('b').lockAddress])),
      track(cluster, await keyedWaiter('keyed-2', 'stuck', a.lockAddress, [cluster.node('b').lockAddress])),
    ];
    await waitFor(async () => (await queueLength(cluster, 'b', 'stuck')) === 3 && (await holderOn(cluster.node('b'), 'seed')) !== null, {
      what: 'the queue of stuck replicated to b',
    });

    const reply = await a.post<{ handoff: { target: string; gapMs: number; failover: string } }>('/api/v1/cluster/handoff', { target: 'b' });
    expect(reply.status).toBe(200);
    const entryId = reply.body.handoff.failover;
    expect(entryId).toMatch(/^b\//);

    const measured: ClientStall[] = await Promise.all([holder.served, waiter.served, ...keyed.map((k) => k.served)]);
    const [onA, onB, onC] = await finishedEverywhere(cluster, ['a', 'b', 'c'], entryId);
    // The old active and the other standby show exactly what the new active does.
    expect(onA).toEqual(onB);
    expect(onC).toEqual(onB);
    const entry = onB as FailoverView;
    expect(entry).toMatchObject({ from: 'a', to: 'b', cause: 'api-handoff', claimsCarried: 3, claimsResumed: 2, claimsExpired: 1 });
    expect(entry.clients).toMatchObject({ moved: 3, expired: 1, lost: 1, ended: 0, reconnecting: 0, requeued: 2, regranted: 2, stalls: 4 });

    const longestClient = Math.max(...measured.map(stallMs));
    const longest = entry.clients?.longestStallMs ?? 0;
    // The keyed waiters waited for the claim nobody resumed: seconds, where the daemon's gap is milliseconds.
    console.log(
      `API handoff: longest client stall ${longestClient.toFixed(1)} ms by the clients, ${longest} ms reported; gap ${entry.gapMs} ms; ${measured.map((m) => `${m.who} ${stallMs(m).toFixed(1)}`).join(', ')}`,
    );
    expect(longestClient).toBeGreaterThan(1_000);
    expect(longest).toBeGreaterThanOrEqual(longestClient);
    expect(longest).toBeLessThanOrEqual(longestClient + entry.gapMs + NOTICE_MS);
    expect(entry.gapMs).toBeLessThan(longest);

    const metrics = await metricsOf(cluster, 'b');
    expect(sample(metrics, 'baton_failover_claims_total{fate="expired"}')).toBe(1);
    expect(sample(metrics, 'baton_failover_claims_total{fate="moved"}')).toBe(3);
    expect(sample(metrics, 'baton_failover_claims_total{fate="lost"}')).toBe(1);
    expect(sample(metrics, 'baton_failover_client_stall_seconds_count{cause="api-handoff"}')).toBe(4);
    expect(sample(metrics, 'baton_failover_client_stall_seconds_bucket{le="1",cause="api-handoff"}')).toBe(2);
  });

  it('kill -9 of the active: stalls measured from the last line heard, the claim nobody resumes expired, the same counts on both survivors', {
    timeout: 90_000,
  }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const a = cluster.node('a');
    const sessionFallback = [cluster.node('b').sessionAddress, cluster.node('c').sessionAddress];
    await keyedHolder(cluster, 'a', 'moves');
    await seedSession(cluster, 'a', 'seed');
    const holder = track(cluster, await sessionClaim('holder', 'held', LONG_LEASE_MS, a.sessionAddress, { resume: true, fallback: sessionFallback }));
    const gone = track(cluster, await sessionClaim('gone', 'stuck', 5_000, a.sessionAddress, { resume: false, fallback: [] }));
    expect(gone.first).toMatch(/^ACQUIRED/);
    const keyed = track(cluster, await keyedWaiter('keyed', 'stuck', a.lockAddress, [cluster.node('b').lockAddress, cluster.node('c').lockAddress]));
    await waitFor(
      async () =>
        (await queueLength(cluster, 'b', 'stuck')) === 1 &&
        (await queueLength(cluster, 'c', 'stuck')) === 1 &&
        (await holderOn(cluster.node('b'), 'held')) !== null,
      { what: 'the claims replicated to b and c' },
    );

    await a.kill9();
    const measured = await Promise.all([holder.served, keyed.served]);
    const active = await waitFor(
      async () => {
        const view = await cluster.node('b').cluster();
        return view.active === 'b' || view.active === 'c' ? view.active : undefined;
      },
      { what: 'a new active' },
    );
    const entryId = (await cluster.node(active).cluster()).failovers.at(-1)?.id ?? '';
    const entries = await finishedEverywhere(cluster, ['b', 'c'], entryId);
    expect(entries[0]).toEqual(entries[1]);
    const entry = entries[0] as FailoverView;
    expect(entry).toMatchObject({ from: 'a', to: active, cause: 'crash', claimsCarried: 2, claimsResumed: 1, claimsExpired: 1 });
    expect(entry.clients).toMatchObject({ moved: 2, expired: 1, lost: 1, reconnecting: 0, requeued: 1, regranted: 1, stalls: 2 });
    const longestClient = Math.max(...measured.map(stallMs));
    const longest = entry.clients?.longestStallMs ?? 0;
    console.log(
      `kill -9: longest client stall ${longestClient.toFixed(1)} ms by the clients, ${longest} ms reported; gap ${entry.gapMs} ms; ${measured.map((m) => `${m.who} ${stallMs(m).toFixed(1)}`).join(', ')}`,
    );
    expect(longest).toBeGreaterThanOrEqual(longestClient);
    expect(longest).toBeLessThanOrEqual(longestClient + entry.gapMs + NOTICE_MS);
    expect(sample(await metricsOf(cluster, active), 'baton_failover_client_stall_seconds_count{cause="crash"}')).toBe(2);
  });
});
