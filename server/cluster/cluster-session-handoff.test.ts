// Resumable sessions through graceful handoffs between real processes (API, SIGTERM, priority
// return): every session holder keeps its lock with the same token and its work is never
// aborted, every session waiter keeps its place, keyed holders keep theirs, and `baton run`
// survives with its command untouched. Seed-protocol sessions: cluster-handoff.test.ts.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ClusterView, LockDetail } from '../../lib/ops-api/api-types.ts';
import type { SessionLease } from '../../lib/client/index.ts';
import { holderOn, startCluster, timeline, waitFor, waitReplicated, waitSettled, type Cluster } from '../testing/cluster-harness.ts';
import { BATON_BIN } from '../testing/serve-args.ts';

const BATON = BATON_BIN;
const HOLDERS = 24;
const LEASE_MS = 5_000;

function activeView(cluster: Cluster, id: string, timeoutMs = 5_000): Promise<ClusterView> {
  return waitFor(
    async () => {
      const view = await cluster.node(id).cluster();
      return view.phase === 'active' ? view : undefined;
    },
    { timeoutMs, what: `${id} to be active` },
  );
}

async function queueOn(cluster: Cluster, id: string, name: string): Promise<LockDetail['queue']> {
  const reply = await cluster.node(id).api<LockDetail>(`/api/v1/locks/${encodeURIComponent(name)}`);
  return reply.status === 200 ? reply.body.queue : [];
}

/** N session holders and, on the first lock, two session waiters (in that order), all replicated to b. */
async function holdersAndWaiters(cluster: Cluster, prefix: string) {
  const sessions = cluster.sessionClient(['a', 'b', 'c']);
  const leases: SessionLease[] = [];
  for (let i = 0; i < HOLDERS; i++) leases.push(await sessions.open(`${prefix}-${i}`, { lease: LEASE_MS }));
  for (const l of leases) cluster.defer(() => l.close());
  const order: string[] = [];
  const waiting = ['first', 'second'].map((who) =>
    sessions.open(`${prefix}-0`, { lease: LEASE_MS }).then((lease) => {
      order.push(who);
      cluster.defer(() => lease.close());
      return lease;
    }),
  );
  // A test that does not take the waiters' locks leaves them waiting until teardown closes the client.
  for (const w of waiting) w.catch(() => undefined);
  await waitFor(async () => (await queueOn(cluster, 'a', `${prefix}-0`)).length === 2, { what: 'two waiters on a' });
  for (const [i, l] of leases.entries()) await waitReplicated(cluster, `${prefix}-${i}`, l.token, ['b']);
  await waitFor(async () => (await queueOn(cluster, 'b', `${prefix}-0`)).length === 2, { what: 'two waiters replicated to b' });
  return { leases, waiting, order };
}

/** Every holder on `id` has its token and is connected again (no longer reconnecting). */
async function allResumedOn(cluster: Cluster, id: string, prefix: string, leases: SessionLease[]): Promise<void> {
  await waitFor(
    async () => {
      for (const [i, l] of leases.entries()) {
        const h = await holderOn(cluster.node(id), `${prefix}-${i}`);
        if (h?.token !== l.token.toString() || h.reconnecting === true) return false;
      }
      return (await queueOn(cluster, id, `${prefix}-0`)).every((w) => w.reconnecting !== true);
    },
    { timeoutMs: 3_000, what: `every session on ${id} resumed with its token` },
  );
}

describe('resumable sessions through a graceful handoff', () => {
  it('by the API: all session holders keep lock and token, none is aborted, waiters keep their order, keyed holders keep theirs', {
    timeout: 60_000,
  }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const grant = await keyed.acquire('api-keyed', { lease: 30_000 });
    const { leases, waiting, order } = await holdersAndWaiters(cluster, 'api');
    await waitReplicated(cluster, 'api-keyed', grant.token, ['b']);

    expect((await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' })).status).toBe(200);
    const view = await activeView(cluster, 'b');
    expect(timeline(view)).toEqual(['a->b api-handoff']);
    await allResumedOn(cluster, 'b', 'api', leases);
    for (const l of leases) expect(l.signal.aborted).toBe(false);
    expect((await holderOn(cluster.node('b'), 'api-keyed'))?.token).toBe(grant.token.toString());
    const entry = (await cluster.node('b').cluster()).failovers.at(-1);
    expect(entry).toMatchObject({ claimsCarried: HOLDERS + 2, claimsResumed: HOLDERS + 2, claimsExpired: 0 });

    // The queue as it was: the first waiter gets the lock, then the second.
    await (leases[0] as SessionLease).close();
    const first = await (waiting[0] as Promise<SessionLease>);
    expect(first.token).toBeGreaterThan((leases[0] as SessionLease).token);
    await first.close();
    await waiting[1];
    expect(order).toEqual(['first', 'second']);
    expect(await keyed.release('api-keyed', grant.token)).toBe(true);
  });

  it('on SIGTERM of the active: session holders keep their locks on b without an abort, and a exits 0', { timeout: 60_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const { leases } = await holdersAndWaiters(cluster, 'sig');
    expect(await cluster.node('a').sigterm()).toBe(0);
    expect(timeline(await activeView(cluster, 'b'))).toEqual(['a->b signal']);
    await allResumedOn(cluster, 'b', 'sig', leases);
    for (const l of leases) expect(l.signal.aborted).toBe(false);
    // As the clients saw it: every claim moved (none expired or lost), each stall measured.
    const entry = await waitFor(async () => (await cluster.node('b').cluster()).failovers.at(-1)?.clients, { what: "b's entry with client figures" });
    expect(entry).toMatchObject({ moved: HOLDERS + 2, expired: 0, lost: 0, reconnecting: 0, stalls: HOLDERS + 2 });
    expect(entry.longestStallMs).toBeGreaterThan(0);
  });

  it('there and back (API handoff, then the priority return after restore): the same tokens all along, no abort, and baton run is never signalled', {
    timeout: 60_000,
  }, async () => {
    // A restore right after the handoff: with the default hold-down (10 s) b would hand the
    // role back only 10 s after a re-synced.
    const cluster = await startCluster({ extraArgs: ['--return-hold-down', '1s'] });
    await waitSettled(cluster, 'a');
    const { leases } = await holdersAndWaiters(cluster, 'prio');
    const run = spawn(
      process.execPath,
      [
        BATON,
        'run',
        'prio-run',
        '--lease',
        '5s',
        '--addr',
        cluster.sessionAddresses().join(','),
        '--',
        'sh',
        '-c',
        'trap "echo signalled; exit 9" TERM; sleep 4 & wait; echo done',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    run.stdout.on('data', (d: Buffer) => (out += d.toString()));
    run.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => run.on('exit', (code) => resolve(code)));
    cluster.defer(() => run.kill('SIGKILL'));
    await waitFor(async () => (await holderOn(cluster.node('b'), 'prio-run')) !== null, { what: 'baton run to hold prio-run, replicated' });

    expect((await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' })).status).toBe(200);
    await activeView(cluster, 'b');
    await waitSettled(cluster, 'b');
    expect((await cluster.node('b').post('/api/v1/cluster/restore', {})).status).toBe(200);
    const back = await activeView(cluster, 'a');
    expect(timeline(back)).toEqual(['a->b api-handoff', 'b->a priority-return']);
    await allResumedOn(cluster, 'a', 'prio', leases);
    for (const l of leases) expect(l.signal.aborted).toBe(false);

    expect(await exited).toBe(0);
    expect(out).toContain('done');
    expect(out).not.toContain('signalled');
  });
});
