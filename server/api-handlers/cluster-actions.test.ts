// The ops API's mutations go through daemon.admin: on a single node they act here; on a standby
// the admin facade forwards them to the active node (a fake here) and its AdminResult becomes
// the answer and the audit entry.
import { describe, expect, it } from 'vitest';
import type { AdminFacade, AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import { adminOpToWire, type WireAdminOp } from '../../lib/ops-api/admin-request.ts';
import { SINGLE_NODE_RESTORE_REASON } from '../admin-ops/single-node-cluster.ts';
import { apiRequest, asAdmin, asReader, READ_TOKEN, SINGLE_NODE_REASON, testFacade } from '../ops-facade/testing/test-facade.ts';
import { postHandoff } from './handoff.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';
import { postRestore } from './restore.ts';

const post = (path: string, body?: string, headers: Record<string, string> = asAdmin) =>
  apiRequest(path, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });

/** A standby's admin facade as the routes see it: records what it forwards (as the peer link carries it) and answers `reply`. */
function forwarding(reply: (op: AdminOp) => AdminResult): AdminFacade & { sent: Array<{ op: WireAdminOp; who: string }> } {
  const sent: Array<{ op: WireAdminOp; who: string }> = [];
  return {
    sent,
    run: async (op, who) => {
      sent.push({ op: adminOpToWire(op), who });
      return reply(op);
    },
  };
}

describe('POST /api/v1/cluster/handoff', () => {
  it('answers 409 conflict with the reason on a single node', async () => {
    const { daemon } = await testFacade();
    const res = await postHandoff(post('/api/v1/cluster/handoff'), daemon);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: { code: 'conflict', message: `conflict: ${SINGLE_NODE_REASON}` } });
  });

  it('passes the target and the caller on to the cluster and answers its body', async () => {
    const admin = forwarding(() => ({ ok: true, body: { handoff: { target: 'node-2' } }, detail: null }));
    const t = await testFacade({ admin });
    const res = await postHandoff(post('/api/v1/cluster/handoff', '{"target":"node-2"}'), t.daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ handoff: { target: 'node-2' } });
    expect(admin.sent).toEqual([{ op: { op: 'handoff', target: 'node-2' }, who: 'bearer:admin' }]);
    expect(t.audit.recent(1)[0]).toMatchObject({ action: 'handoff', target: 'node-2', result: 'ok' });
  });

  it('asks for any standby without a body', async () => {
    const admin = forwarding(() => ({ ok: true, body: { handoff: { target: 'b' } }, detail: null }));
    const t = await testFacade({ admin });
    await postHandoff(post('/api/v1/cluster/handoff'), t.daemon);
    expect(admin.sent[0]?.op).toEqual({ op: 'handoff', target: null });
    expect(t.audit.recent(1)[0]).toMatchObject({ target: 'any standby' });
  });

  it('refuses a misspelt target key with 422 instead of handing off to any standby', async () => {
    const admin = forwarding(() => ({ ok: true, body: {}, detail: null }));
    const t = await testFacade({ admin });
    expect((await postHandoff(post('/api/v1/cluster/handoff', '{"tagret":"node-2"}'), t.daemon)).status).toBe(422);
    expect(admin.sent).toEqual([]);
  });

  it('answers 422 for a target that is not a string', async () => {
    const { daemon } = await testFacade();
    expect((await postHandoff(post('/api/v1/cluster/handoff', '{"target":5}'), daemon)).status).toBe(422);
  });
});

describe('POST /api/v1/cluster/restore', () => {
  it('answers 409 conflict on a node that is not clustered, and audits it', async () => {
    const t = await testFacade();
    const res = await postRestore(post('/api/v1/cluster/restore'), t.daemon);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: { code: 'conflict', message: `conflict: ${SINGLE_NODE_RESTORE_REASON}` } });
    expect(t.audit.recent(1)[0]).toMatchObject({ who: 'bearer:admin', action: 'restore', target: 'every yielded node', result: 'conflict' });
  });

  it('passes the node on and answers the body of the result', async () => {
    const admin = forwarding(() => ({ ok: true, body: { restored: ['a'] }, detail: 'a may take the active role back' }));
    const t = await testFacade({ admin });
    const res = await postRestore(post('/api/v1/cluster/restore', '{"node":"a"}'), t.daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ restored: ['a'] });
    expect(admin.sent).toEqual([{ op: { op: 'restore', node: 'a' }, who: 'bearer:admin' }]);
    expect(t.audit.recent(1)[0]).toMatchObject({ action: 'restore', target: 'a', result: 'ok', detail: 'a may take the active role back' });
  });

  it('takes no body or {} as every yielded node', async () => {
    const admin = forwarding(() => ({ ok: true, body: {}, detail: null }));
    const t = await testFacade({ admin });
    await postRestore(post('/api/v1/cluster/restore'), t.daemon);
    await postRestore(post('/api/v1/cluster/restore', '{}'), t.daemon);
    expect(admin.sent.map((s) => s.op)).toEqual([
      { op: 'restore', node: null },
      { op: 'restore', node: null },
    ]);
  });

  it('refuses unknown keys, a non-string node and bad JSON before asking the cluster', async () => {
    const admin = forwarding(() => ({ ok: true, body: {}, detail: null }));
    const t = await testFacade({ admin });
    expect((await postRestore(post('/api/v1/cluster/restore', '{"nodes":"a"}'), t.daemon)).status).toBe(422);
    expect((await postRestore(post('/api/v1/cluster/restore', '{"node":1}'), t.daemon)).status).toBe(422);
    expect((await postRestore(post('/api/v1/cluster/restore', '{"node":""}'), t.daemon)).status).toBe(422);
    expect((await postRestore(post('/api/v1/cluster/restore', '{'), t.daemon)).status).toBe(400);
    expect(admin.sent).toEqual([]);
  });

  it('needs the admin token', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    expect((await postRestore(post('/api/v1/cluster/restore', undefined, {}), t.daemon)).status).toBe(401);
    expect((await postRestore(post('/api/v1/cluster/restore', undefined, asReader), t.daemon)).status).toBe(403);
    expect(t.audit.recent(5).map((e) => [e.action, e.result])).toEqual([['restore', 'forbidden']]);
  });
});

describe('lock actions on a standby (forwarded to the active node)', () => {
  it("forwards a checked force-release with the token as a decimal string and answers the active node's result", async () => {
    const body = { released: { name: 'a', token: '7', protocol: 'keyed', client: '10.0.0.1:1' }, nextHolder: null };
    const admin = forwarding(() => ({ ok: true, body, detail: 'token 7 held by 10.0.0.1:1 (keyed)' }));
    const t = await testFacade({ admin, role: () => 'standby' });
    const res = await forceRelease(post('/api/v1/locks/a/force-release', '{"token":7}'), t.daemon, { name: 'a' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(body);
    expect(admin.sent).toEqual([{ op: { op: 'force-release', lock: 'a', token: '7' }, who: 'bearer:admin' }]);
    expect(t.audit.recent(1)[0]).toMatchObject({ action: 'force-release', target: 'a', result: 'ok', detail: 'token 7 held by 10.0.0.1:1 (keyed)' });
    // The standby's own engine and timer are not touched: the active node acted.
    expect(t.wakes()).toBe(0);
  });

  it('sends a null token when none is given, and a kick with its numeric claim id', async () => {
    const admin = forwarding(() => ({ ok: false, error: 'not-found', detail: 'nobody holds a' }));
    const t = await testFacade({ admin });
    expect((await forceRelease(post('/api/v1/locks/a/force-release'), t.daemon, { name: 'a' })).status).toBe(404);
    expect((await kickWaiter(post('/api/v1/locks/a/waiters/12/kick'), t.daemon, { name: 'a', id: '12' })).status).toBe(404);
    expect(admin.sent.map((s) => s.op)).toEqual([
      { op: 'force-release', lock: 'a', token: null },
      { op: 'kick', lock: 'a', claimId: 12 },
    ]);
  });

  it('checks the input before forwarding anything', async () => {
    const admin = forwarding(() => ({ ok: true, body: {}, detail: null }));
    const t = await testFacade({ admin });
    expect((await forceRelease(post('/api/v1/locks/a/force-release', '{"Token":"1"}'), t.daemon, { name: 'a' })).status).toBe(422);
    expect((await forceRelease(post('/api/v1/locks/x%20y/force-release'), t.daemon, { name: 'x y' })).status).toBe(422);
    expect((await kickWaiter(post('/api/v1/locks/a/waiters/0/kick'), t.daemon, { name: 'a', id: '0' })).status).toBe(422);
    expect(admin.sent).toEqual([]);
  });

  it('answers 503 server-going-away when no active node is known, and audits it', async () => {
    const admin = forwarding(() => ({ ok: false, error: 'server-going-away', detail: 'no active node is known' }));
    const t = await testFacade({ admin });
    const res = await forceRelease(post('/api/v1/locks/a/force-release'), t.daemon, { name: 'a' });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'server-going-away', message: expect.stringContaining('no active node is known') } });
    expect(t.audit.recent(1)[0]).toMatchObject({ result: 'server-going-away' });
  });

  it('answers 500 internal for an error name this build does not know (a newer peer)', async () => {
    const admin = forwarding(() => ({ ok: false, error: 'brand-new-error' as never, detail: 'from the future' }));
    const t = await testFacade({ admin });
    const res = await kickWaiter(post('/api/v1/locks/a/waiters/3/kick'), t.daemon, { name: 'a', id: '3' });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { code: 'internal' } });
  });

  it('audits and rethrows when forwarding throws', async () => {
    const t = await testFacade({ admin: { run: async () => Promise.reject(new Error('peer link closed')) } });
    await expect(forceRelease(post('/api/v1/locks/a/force-release'), t.daemon, { name: 'a' })).rejects.toThrow('peer link closed');
    expect(t.audit.recent(1)[0]).toMatchObject({ result: 'internal', detail: 'peer link closed' });
  });
});
