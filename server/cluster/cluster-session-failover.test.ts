// Resumable sessions through a crash of the active (kill -9), on real processes: a replicated
// claim is kept on the new active for the rest of its lease and its client takes it up; one whose
// client does not come back expires there like a silent session and its lock goes to the next
// waiter; a RESUME with only the (public) token, or a wrong key, is refused and ends nothing.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LockDetail } from '../../lib/ops-api/api-types.ts';
import type { SessionLease } from '../../lib/client/index.ts';
import { activeOf, holderOn, startCluster, timeline, waitFor, waitReplicated, waitSettled, type Cluster } from '../testing/cluster-harness.ts';
import { LineClient } from '../testing/line-client.ts';

const UNKNOWN = 'ERROR 0x09 claim unknown: no claim with that key is waiting to be resumed here';

async function queueOn(cluster: Cluster, id: string, name: string): Promise<LockDetail['queue']> {
  const reply = await cluster.node(id).api<LockDetail>(`/api/v1/locks/${encodeURIComponent(name)}`);
  return reply.status === 200 ? reply.body.queue : [];
}

/** The node that took over from a (b, or rarely c). */
async function newActive(cluster: Cluster): Promise<string> {
  return waitFor(
    async () => {
      const active = await activeOf(cluster);
      return active.length === 1 ? active[0] : undefined;
    },
    { timeoutMs: 5_000, what: 'a new active node' },
  );
}

describe('resumable sessions through a crash of the active', () => {
  it('kill -9: every replicated holder and waiter whose client comes back in time is kept, with the same token and no abort', { timeout: 60_000 }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const sessions = cluster.sessionClient(['a', 'b', 'c']);
    const leases: SessionLease[] = [];
    for (let i = 0; i < 10; i++) leases.push(await sessions.open(`crash-${i}`, { lease: 5_000 }));
    for (const l of leases) cluster.defer(() => l.close());
    const waiter = sessions.open('crash-0', { lease: 5_000 });
    waiter.catch(() => undefined);
    await waitFor(async () => (await queueOn(cluster, 'a', 'crash-0')).length === 1, { what: 'the waiter on a' });
    for (const [i, l] of leases.entries()) await waitReplicated(cluster, `crash-${i}`, l.token, ['b', 'c']);
    await waitFor(async () => (await queueOn(cluster, 'b', 'crash-0')).length === 1 && (await queueOn(cluster, 'c', 'crash-0')).length === 1, {
      what: 'the waiter replicated',
    });

    await cluster.node('a').kill9();
    const active = await newActive(cluster);
    const node = cluster.node(active);
    await waitFor(
      async () => {
        for (const [i, l] of leases.entries()) {
          const h = await holderOn(node, `crash-${i}`);
          if (h?.token !== l.token.toString() || h.reconnecting === true) return false;
        }
        return (await queueOn(cluster, active, 'crash-0')).map((w) => w.reconnecting ?? false).join() === 'false';
      },
      { timeoutMs: 4_000, what: `every claim resumed on ${active}` },
    );
    for (const l of leases) expect(l.signal.aborted).toBe(false);
    const view = await node.cluster();
    expect(timeline(view)).toEqual([`a->${active} crash`]);
    expect(view.failovers.at(-1)).toMatchObject({ claimsCarried: 11, claimsResumed: 11, claimsExpired: 0 });

    // The waiter kept its place: it is next when the holder lets go.
    await (leases[0] as SessionLease).close();
    const granted = await waiter;
    cluster.defer(() => granted.close());
    expect(granted.token).toBeGreaterThan((leases[0] as SessionLease).token);
  });

  it('kill -9: a claim whose client does not come back expires at its lease and the next waiter gets the lock; a RESUME with only the token is refused', {
    timeout: 60_000,
  }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const key = randomBytes(16).toString('hex');
    // A hand-written client that opts in and then never comes back after the crash.
    const gone = await LineClient.open(cluster.node('a').ports.session, '127.0.0.1', { timeoutMs: 5_000 });
    cluster.defer(() => gone.close());
    const leaseMs = 4_000;
    const acquiredAt = performance.now();
    gone.send(`ACQUIRE crash-gone ${leaseMs} ${key}`);
    const token = BigInt((await gone.next()).split(' ')[1] ?? '0');
    const sessions = cluster.sessionClient(['a', 'b', 'c']);
    const next = sessions.open('crash-gone', { lease: 5_000 }).then((lease) => ({ lease, at: performance.now() }));
    next.catch(() => undefined);
    await waitFor(async () => (await queueOn(cluster, 'b', 'crash-gone')).length === 1 && (await queueOn(cluster, 'c', 'crash-gone')).length === 1, {
      what: 'the waiter replicated',
    });
    await waitReplicated(cluster, 'crash-gone', token, ['b', 'c']);

    await cluster.node('a').kill9();
    const active = await newActive(cluster);
    const node = cluster.node(active);
    const kept = await waitFor(
      async () => {
        const h = await holderOn(node, 'crash-gone');
        return h?.reconnecting === true ? h : undefined;
      },
      { what: `crash-gone kept on ${active}, reconnecting` },
    );
    expect(kept.token).toBe(token.toString());
    expect(kept.leaseRemainingMs).toBeLessThanOrEqual(leaseMs - (performance.now() - acquiredAt) + 100);

    // Tokens are public (API, dashboard, feed): one, in any form, or a wrong key takes nothing.
    for (const forged of [token.toString(16).padStart(32, '0'), token.toString().padStart(32, '0'), randomBytes(16).toString('hex')]) {
      const forger = await LineClient.open(node.ports.session, '127.0.0.1', { timeoutMs: 3_000 });
      cluster.defer(() => forger.close());
      forger.send(`RESUME crash-gone ${forged}`);
      expect(await forger.closedWith()).toEqual([UNKNOWN]);
    }
    expect(await holderOn(node, 'crash-gone')).toMatchObject({ token: token.toString(), reconnecting: true });

    // Nobody comes back: it ends at its lease counted from the grant (never later than a would
    // have ended it, plus the replication transit), and the lock goes to the next waiter.
    const { lease, at } = await next;
    cluster.defer(() => lease.close());
    expect(lease.token).toBeGreaterThan(token);
    expect(at - acquiredAt).toBeGreaterThan(leaseMs - 100);
    expect(at - acquiredAt).toBeLessThan(leaseMs + 1_000);
    const entry = (await node.cluster()).failovers.at(-1);
    expect(entry).toMatchObject({ claimsCarried: 2, claimsResumed: 1, claimsExpired: 1 });
    // The real key is still refused now: the claim is over.
    const late = await LineClient.open(node.ports.session, '127.0.0.1', { timeoutMs: 3_000 });
    cluster.defer(() => late.close());
    late.send(`RESUME crash-gone ${key}`);
    expect(await late.closedWith()).toEqual([UNKNOWN]);
  });
});
