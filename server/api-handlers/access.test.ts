// Who may change things: the admin token or an admin session from our own pages, nobody else.
import { describe, expect, it } from 'vitest';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { ADMIN_TOKEN, apiRequest, asAdmin, asReader, READ_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';
import { postHandoff } from './handoff.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';

const SAME_ORIGIN = 'http://127.0.0.1:3000';

function sessionCookie(daemon: DaemonFacade, token = ADMIN_TOKEN): string {
  const session = daemon.security.signIn(token);
  if (session === null) throw new Error('sign-in failed');
  return `baton_session=${session.cookieValue}`;
}

/** Force-releases lock "a" (held) with the given headers; returns the status. */
async function releaseWith(headers: Record<string, string>, options: { readToken?: string } = {}): Promise<number> {
  const t = await testFacade({ readToken: options.readToken ?? null });
  t.hold('a');
  const res = await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers }), t.daemon, { name: 'a' });
  return res.status;
}

describe('mutations', () => {
  it('refuse an anonymous caller with 401', async () => {
    expect(await releaseWith({})).toBe(401);
  });

  it('refuse a wrong bearer token with 401', async () => {
    expect(await releaseWith({ authorization: 'Bearer wrong' })).toBe(401);
  });

  it('refuse the read token with 403', async () => {
    expect(await releaseWith(asReader, { readToken: READ_TOKEN })).toBe(403);
  });

  it('accept the admin token without an Origin', async () => {
    expect(await releaseWith(asAdmin)).toBe(200);
  });

  it('accept the admin token with a foreign Origin (a browser cannot send the header cross-site)', async () => {
    expect(await releaseWith({ ...asAdmin, origin: 'http://evil.example' })).toBe(200);
  });

  it('accept an admin session from a same-host Origin', async () => {
    const t = await testFacade();
    t.hold('a');
    const cookie = sessionCookie(t.daemon);
    const res = await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: { cookie, origin: SAME_ORIGIN } }), t.daemon, {
      name: 'a',
    });
    expect(res.status).toBe(200);
  });

  it('refuse an admin session from a foreign Origin with 403', async () => {
    const t = await testFacade();
    t.hold('a');
    const cookie = sessionCookie(t.daemon);
    const res = await forceRelease(
      apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: { cookie, origin: 'http://evil.example' } }),
      t.daemon,
      { name: 'a' },
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'forbidden', message: 'forbidden: cross-site request refused' } });
    expect(t.engine.lock('a')?.holder).not.toBeNull();
  });

  it('refuse an admin session without an Origin with 403', async () => {
    const t = await testFacade();
    const cookie = sessionCookie(t.daemon);
    const res = await postHandoff(apiRequest('/api/v1/cluster/handoff', { method: 'POST', headers: { cookie } }), t.daemon);
    expect(res.status).toBe(403);
  });

  it('refuse a read session with 403 even from our own pages', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    const cookie = sessionCookie(t.daemon, READ_TOKEN);
    const res = await kickWaiter(apiRequest('/api/v1/locks/a/waiters/1/kick', { method: 'POST', headers: { cookie, origin: SAME_ORIGIN } }), t.daemon, {
      name: 'a',
      id: '1',
    });
    expect(res.status).toBe(403);
  });

  it('check credentials before looking at the body', async () => {
    const t = await testFacade();
    const res = await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', body: 'not json' }), t.daemon, { name: 'a' });
    expect(res.status).toBe(401);
  });
});
