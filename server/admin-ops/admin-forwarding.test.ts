// A force-release and a kick sent to a standby's ops API: parsed at the standby's HTTP edge,
// written as text onto the peer link, parsed again at the active's peer edge and run on its
// engine; the result (tokens as text) comes back as the standby's answer, and the active audits
// the op under the caller's name. (Whether the active's timer is woken is not visible from here:
// the daemon's once-a-second grant retry pokes it too; lock-actions.test.ts counts the wakes.)
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { ClientHeldView, ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import { LineClient } from '../testing/line-client.ts';
import { type Cluster, holderOn, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';

async function raw(cluster: Cluster, port: number): Promise<LineClient> {
  const client = await LineClient.open(port, '127.0.0.1', { timeoutMs: 5_000 });
  cluster.defer(() => client.close());
  return client;
}

describe('admin ops forwarded by a standby', () => {
  it('release the named holder and kick a waiter on the active node, and the new holder has its own lease', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    const holder = await raw(cluster, a.ports.lock);
    holder.send('A fwd 30 0');
    const token = (await holder.next()).split(' ')[2] ?? '';
    const kicked = await raw(cluster, a.ports.lock);
    kicked.send('A fwd 30 0');
    const next = await raw(cluster, a.ports.lock);
    next.send('A fwd 1 0');
    const queue = await waitFor(async () => {
      const reply = await a.api<{ queue: Array<{ id: string }> }>('/api/v1/locks/fwd');
      return reply.status === 200 && reply.body.queue.length === 2 ? reply.body.queue : null;
    });

    const kick = await b.post(`/api/v1/locks/fwd/waiters/${queue[0]?.id}/kick`);
    expect(kick).toEqual({ status: 200, body: { kicked: { name: 'fwd', id: queue[0]?.id } } });
    const released = await b.post<{ released: { token: string }; nextHolder: { token: string; leaseMs: number } }>('/api/v1/locks/fwd/force-release', {
      token,
    });
    expect(released.status).toBe(200);
    expect(released.body.released.token).toBe(token);
    expect(released.body.nextHolder.leaseMs).toBe(1_000);
    const audit = await a.api<{ entries: AuditEntry[] }>('/api/v1/audit');
    expect(audit.body.entries.filter((e) => e.node === 'a').map((e) => [e.who, e.action, e.result])).toEqual([
      ['bearer:admin via b', 'kick', 'ok'],
      ['bearer:admin via b', 'force-release', 'ok'],
    ]);
    // The standby audits them too, and the audit is the cluster's: a shows b's entries as well.
    const fromB = await waitFor(async () => {
      const { body } = await a.api<{ entries: AuditEntry[] }>('/api/v1/audit');
      const entries = body.entries.filter((e) => e.node === 'b');
      return entries.length === 2 ? entries : null;
    });
    expect(fromB.map((e) => [e.who, e.action, e.result])).toEqual([
      ['bearer:admin', 'kick', 'ok'],
      ['bearer:admin', 'force-release', 'ok'],
    ]);
    // The new holder's 1 s lease runs on the active's engine: it ends long before the old 30 s one would have.
    await waitFor(async () => (await holderOn(a, 'fwd')) === null || null, { timeoutMs: 5_000 });
  });

  it('a standby shows the client identities it replicated (live and from a snapshot) and forwards a bulk release by client', { timeout: 45_000 }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    const worker = await raw(cluster, a.ports.lock);
    worker.send('I stuck worker @host-9', 'A bulk/1 30 0', 'A bulk/2 30 0', 'A bulk/3 30 0');
    expect((await worker.take(4))[0]).toBe('I OK');
    const session = await raw(cluster, a.ports.session);
    session.send('CLIENT session worker', 'ACQUIRE bulk/s 30000');
    expect(await session.next()).toMatch(/^ACQUIRED \d+$/);
    const names = async (): Promise<(string | null | undefined)[]> => Promise.all(['bulk/1', 'bulk/s'].map(async (n) => (await holderOn(b, n))?.clientName));
    // From the replication stream:
    await waitFor(async () => ((await names()).every((n) => typeof n === 'string') ? true : null), { what: 'identities on b' });
    expect(await names()).toEqual(['stuck worker @host-9', 'session worker']);
    // From a snapshot: b starts again and syncs the table afresh.
    await b.kill9();
    await b.restart();
    await waitSettled(cluster, 'a');
    await waitFor(async () => ((await names()).every((n) => typeof n === 'string') ? true : null), { what: 'identities on b after its snapshot' });
    expect(await names()).toEqual(['stuck worker @host-9', 'session worker']);

    const listed = await b.api<ClientHeldView>(`/api/v1/clients/held?identity=${encodeURIComponent('stuck worker @host-9')}`);
    expect(listed.body.held.map((h) => h.name)).toEqual(['bulk/1', 'bulk/2', 'bulk/3']);
    const tokens = listed.body.held.map((h) => h.token);
    const released = await b.post<ClientReleaseResult>('/api/v1/clients/force-release', { identity: 'stuck worker @host-9', tokens: [...tokens, '1'] });
    expect(released.status).toBe(200);
    expect(released.body.released.map((r) => r.name)).toEqual(['bulk/1', 'bulk/2', 'bulk/3']);
    expect(released.body.stale).toEqual(['1']);
    const audit = await a.api<{ entries: AuditEntry[] }>('/api/v1/audit');
    // The active's own record of it (the audit is cluster-wide: b's own entries reach a too).
    expect(audit.body.entries.filter((e) => e.node === 'a').map((e) => [e.who, e.action, e.target])).toEqual([
      ['bearer:admin via b', 'release-client', 'identity stuck worker @host-9'],
      ['bearer:admin via b', 'force-release', 'bulk/1'],
      ['bearer:admin via b', 'force-release', 'bulk/2'],
      ['bearer:admin via b', 'force-release', 'bulk/3'],
    ]);
    expect(await holderOn(a, 'bulk/2')).toBeNull();
    expect((await holderOn(a, 'bulk/s'))?.clientName).toBe('session worker');
  });
});
