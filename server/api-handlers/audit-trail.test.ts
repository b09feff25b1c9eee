// Every admin action that got past authentication leaves an audit entry, on disk too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../audit/audit-log.ts';
import { ADMIN_TOKEN, apiRequest, asAdmin, asReader, READ_TOKEN, SINGLE_NODE_REASON, testFacade } from '../ops-facade/testing/test-facade.ts';
import { signIn, signOut } from './auth-session.ts';
import { postHandoff } from './handoff.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';

const ORIGIN = 'http://127.0.0.1:3000';
const post = (path: string, headers: Record<string, string> = asAdmin, body?: string) =>
  apiRequest(path, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('the audit trail', () => {
  it('records a force-release with the token it released', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    await forceRelease(post('/api/v1/locks/a/force-release'), t.daemon, { name: 'a' });
    expect(t.audit.recent(10)).toEqual([
      {
        at: expect.any(Number),
        who: 'bearer:admin',
        action: 'force-release',
        target: 'a',
        result: 'ok',
        detail: expect.stringContaining(`token ${holder.token}`),
        node: expect.any(String),
        id: expect.any(String),
      },
    ]);
  });

  it('records a refused force-release with its error code', async () => {
    const t = await testFacade();
    const old = t.hold('a');
    t.hold('a');
    t.engine.release('a', old.token);
    await forceRelease(post('/api/v1/locks/a/force-release', asAdmin, JSON.stringify({ token: old.token.toString() })), t.daemon, { name: 'a' });
    await forceRelease(post('/api/v1/locks/b/force-release'), t.daemon, { name: 'b' });
    await forceRelease(post('/api/v1/locks/a/force-release', asAdmin, '{'), t.daemon, { name: 'a' });
    expect(t.audit.recent(10).map((e) => e.result)).toEqual(['stale-token', 'not-found', 'bad-request']);
  });

  it('records a kick with the waiter id', async () => {
    const t = await testFacade();
    t.hold('a');
    const waiter = t.hold('a');
    await kickWaiter(post(`/api/v1/locks/a/waiters/${waiter.id}/kick`), t.daemon, { name: 'a', id: String(waiter.id) });
    expect(t.audit.recent(1)[0]).toMatchObject({ action: 'kick', target: 'a', result: 'ok', detail: `waiter ${waiter.id} of 127.0.0.1:5000 (keyed)` });
  });

  it('records a refused handoff with the reason', async () => {
    const t = await testFacade();
    await postHandoff(post('/api/v1/cluster/handoff'), t.daemon);
    expect(t.audit.recent(1)[0]).toMatchObject({ action: 'handoff', target: 'any standby', result: 'conflict', detail: SINGLE_NODE_REASON });
  });

  it('records nothing for a caller refused at authentication', async () => {
    const t = await testFacade();
    t.hold('a');
    await forceRelease(post('/api/v1/locks/a/force-release', {}), t.daemon, { name: 'a' });
    expect(t.audit.recent(10)).toEqual([]);
  });

  it('records a known caller refused for lack of the admin role', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    t.hold('a');
    await forceRelease(post('/api/v1/locks/a/force-release', asReader), t.daemon, { name: 'a' });
    expect(t.audit.recent(1)[0]).toMatchObject({ who: 'bearer:read', action: 'force-release', target: 'a', result: 'forbidden' });
  });

  it('records a cross-site attempt riding on an admin session', async () => {
    const t = await testFacade();
    const session = t.security.signIn(ADMIN_TOKEN);
    const headers = { cookie: `baton_session=${session?.cookieValue}`, origin: 'http://127.0.0.1:8080' };
    await kickWaiter(post('/api/v1/locks/a/waiters/1/kick', headers), t.daemon, { name: 'a', id: '1' });
    expect(t.audit.recent(1)[0]).toMatchObject({
      who: `session:${session?.publicId}`,
      action: 'kick',
      result: 'forbidden',
      detail: 'cross-site request refused',
    });
  });

  it('names a session by its public id, from sign-in through an action to sign-out', async () => {
    const t = await testFacade();
    t.hold('a');
    const res = await signIn(post('/api/v1/auth/session', { origin: ORIGIN }, JSON.stringify({ token: ADMIN_TOKEN })), t.daemon);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const who = t.audit.recent(1)[0]?.who;
    expect(who).toMatch(/^session:[0-9a-f]{8}$/);
    await forceRelease(post('/api/v1/locks/a/force-release', { cookie, origin: ORIGIN }), t.daemon, { name: 'a' });
    signOut(apiRequest('/api/v1/auth/session', { method: 'DELETE', headers: { cookie, origin: ORIGIN } }), t.daemon);
    expect(t.audit.recent(10).map((e) => [e.who, e.action, e.result])).toEqual([
      [who, 'sign-in', 'ok'],
      [who, 'force-release', 'ok'],
      [who, 'sign-out', 'ok'],
    ]);
  });

  it('records a failed sign-in as anonymous and unauthorized', async () => {
    const t = await testFacade();
    await signIn(post('/api/v1/auth/session', {}, JSON.stringify({ token: 'guess' })), t.daemon);
    expect(t.audit.recent(1)[0]).toMatchObject({ who: 'anonymous', action: 'sign-in', result: 'unauthorized' });
  });

  it('keeps the entries in the data dir for the next start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-audit-api-'));
    dirs.push(dir);
    const t = await testFacade({ audit: await AuditLog.open(dir) });
    t.hold('a');
    await forceRelease(post('/api/v1/locks/a/force-release'), t.daemon, { name: 'a' });
    await postHandoff(post('/api/v1/cluster/handoff'), t.daemon);
    await t.audit.close();
    const reopened = await AuditLog.open(dir);
    expect(reopened.recent(10).map((e) => [e.action, e.result])).toEqual([
      ['force-release', 'ok'],
      ['handoff', 'conflict'],
    ]);
    await reopened.close();
  });
});
