// The audit is the cluster's: an admin action recorded on one node appears in every node's
// /api/v1/audit (with the node that recorded it), also after a handoff, and a node that
// restarts gets what happened while it was down. Real processes on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import { type NodeProcess, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';

async function auditOf(node: NodeProcess): Promise<AuditEntry[]> {
  const reply = await node.api<{ entries: AuditEntry[] }>('/api/v1/audit?limit=200');
  if (reply.status !== 200) throw new Error(`audit of ${node.id}: ${reply.status}`);
  return reply.body.entries;
}

/** Waits until `node`'s audit has an entry matching `pick`, and returns it. */
function seenOn(node: NodeProcess, pick: (e: AuditEntry) => boolean): Promise<AuditEntry> {
  return waitFor(async () => (await auditOf(node)).find(pick) ?? null, { timeoutMs: 5_000 });
}

describe('the cluster-wide audit', () => {
  it('shows an action recorded on one node on every node, with that node, once; after a handoff too; and on a restarted node', {
    timeout: 60_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 3 });
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];

    // A force-release of a lock nobody holds fails on a, and is audited there.
    expect((await a.post('/api/v1/locks/audit-one/force-release')).status).toBe(404);
    const onA = await seenOn(a, (e) => e.target === 'audit-one');
    expect(onA).toMatchObject({ node: 'a', action: 'force-release', result: 'not-found' });
    for (const n of [b, c]) expect(await seenOn(n, (e) => e.target === 'audit-one')).toEqual(onA);

    // Handoff to b; an action on the new active shows up on a and c at once.
    expect((await a.post('/api/v1/cluster/handoff', { target: 'b' })).status).toBe(200);
    await waitSettled(cluster, 'b', 10_000);
    expect((await b.post('/api/v1/locks/audit-two/force-release')).status).toBe(404);
    const onB = await seenOn(b, (e) => e.target === 'audit-two' && e.node === 'b');
    expect(await seenOn(a, (e) => e.id === onB.id)).toEqual(onB);
    expect(await seenOn(c, (e) => e.id === onB.id)).toEqual(onB);
    // The handoff itself, recorded on a, reached b and c.
    const handoff = await seenOn(b, (e) => e.action === 'handoff' && e.node === 'a');
    expect(await seenOn(c, (e) => e.id === handoff.id)).toEqual(handoff);

    // c is down while an action happens; when it comes back, the catch-up brings it.
    await c.kill9();
    expect((await b.post('/api/v1/locks/audit-three/force-release')).status).toBe(404);
    const whileDown = await seenOn(b, (e) => e.target === 'audit-three');
    await c.restart();
    expect(await seenOn(c, (e) => e.id === whileDown.id)).toEqual(whileDown);

    // Each entry is kept once on every node, however many catch-ups it went through.
    for (const n of [a, b, c]) {
      const ids = (await auditOf(n)).map((e) => e.id).filter((id) => id !== undefined);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});
