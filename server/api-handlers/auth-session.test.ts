import { describe, expect, it } from 'vitest';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { ADMIN_TOKEN, apiRequest, asAdmin, READ_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getSession, signIn, signOut } from './auth-session.ts';
import { CLIENT_ADDRESS_HEADER } from './client-address.ts';
import { forceRelease } from './lock-actions.ts';

const ORIGIN = 'http://127.0.0.1:3000';

function signInRequest(token: string, headers: Record<string, string> = { origin: ORIGIN }): Request {
  return apiRequest('/api/v1/auth/session', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ token }) });
}

/** Signs in and returns the Cookie header a browser would send back. */
async function signedIn(daemon: DaemonFacade, token = ADMIN_TOKEN): Promise<string> {
  const res = await signIn(signInRequest(token), daemon);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return setCookie.split(';')[0] ?? '';
}

/** Headers of a request from our own page at client address `address` (as the servers stamp it). */
function from(address: string): Record<string, string> {
  return { origin: ORIGIN, [CLIENT_ADDRESS_HEADER]: address };
}

describe('POST /api/v1/auth/session', () => {
  it('trades the admin token for an HttpOnly, SameSite=Strict session cookie of 12 hours', async () => {
    const { daemon } = await testFacade();
    const res = await signIn(signInRequest(ADMIN_TOKEN), daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ role: 'admin', readsOpen: true });
    expect(res.headers.get('set-cookie')).toMatch(/^baton_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/);
  });

  it('gives the read token a read session', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect(await (await signIn(signInRequest(READ_TOKEN), daemon)).json()).toEqual({ role: 'read', readsOpen: false });
  });

  it('refuses a wrong token with 401 and no cookie', async () => {
    const { daemon } = await testFacade();
    const res = await signIn(signInRequest('wrong'), daemon);
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('audits at most ten failed sign-ins a minute, and refuses every one of them', async () => {
    const t = await testFacade();
    for (let i = 0; i < 25; i++) expect((await signIn(signInRequest(`wrong-${i}`, from(`10.0.0.${i}`)), t.daemon)).status).toBe(401);
    expect(t.audit.recent(100).filter((e) => e.action === 'sign-in' && e.result === 'unauthorized')).toHaveLength(10);
    expect((await signIn(signInRequest(ADMIN_TOKEN), t.daemon)).status).toBe(200);
  });

  it('refuses a sign-in posted from a foreign Origin with 403', async () => {
    const { daemon } = await testFacade();
    expect((await signIn(signInRequest(ADMIN_TOKEN, { origin: 'http://evil.example' }), daemon)).status).toBe(403);
  });

  it('accepts a sign-in with no Origin (a script, not a browser)', async () => {
    const { daemon } = await testFacade();
    expect((await signIn(signInRequest(ADMIN_TOKEN, {}), daemon)).status).toBe(200);
  });

  it('answers 400 for a body that is not JSON and 422 for one without a token', async () => {
    const { daemon } = await testFacade();
    const post = (body: string) => signIn(apiRequest('/api/v1/auth/session', { method: 'POST', body }), daemon);
    expect((await post('token=x')).status).toBe(400);
    expect((await post('{"token": 5}')).status).toBe(422);
    expect((await post('')).status).toBe(422);
  });

  it('answers 413 for a body over 16 KiB', async () => {
    const { daemon } = await testFacade();
    expect((await signIn(signInRequest('x'.repeat(20_000)), daemon)).status).toBe(413);
  });
});

describe('the session cookie', () => {
  it('lets the browser force-release from our own pages', async () => {
    const t = await testFacade();
    t.hold('a');
    const cookie = await signedIn(t.daemon);
    const res = await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: { cookie, origin: ORIGIN } }), t.daemon, {
      name: 'a',
    });
    expect(res.status).toBe(200);
  });

  it('is refused for a mutation from a foreign Origin', async () => {
    const t = await testFacade();
    t.hold('a');
    const cookie = await signedIn(t.daemon);
    const res = await forceRelease(
      apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: { cookie, origin: 'http://evil.example' } }),
      t.daemon,
      { name: 'a' },
    );
    expect(res.status).toBe(403);
  });

  it('is refused for a mutation with no Origin', async () => {
    const t = await testFacade();
    t.hold('a');
    const cookie = await signedIn(t.daemon);
    const res = await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: { cookie } }), t.daemon, { name: 'a' });
    expect(res.status).toBe(403);
  });
});

describe('GET /api/v1/auth/session', () => {
  it('shows an anonymous caller no role, and whether reads are open', async () => {
    const { daemon } = await testFacade({ host: '0.0.0.0' });
    expect(await getSession(apiRequest('/api/v1/auth/session'), daemon).json()).toEqual({ role: null, readsOpen: false });
  });

  it('shows a signed-in caller its role', async () => {
    const { daemon } = await testFacade();
    const cookie = await signedIn(daemon);
    expect(await getSession(apiRequest('/api/v1/auth/session', { headers: { cookie } }), daemon).json()).toEqual({ role: 'admin', readsOpen: true });
  });

  it('shows a bearer caller its role', async () => {
    const { daemon } = await testFacade();
    expect(await getSession(apiRequest('/api/v1/auth/session', { headers: asAdmin }), daemon).json()).toMatchObject({ role: 'admin' });
  });
});

describe('DELETE /api/v1/auth/session', () => {
  it('ends the session and clears the cookie', async () => {
    const { daemon } = await testFacade();
    const cookie = await signedIn(daemon);
    const res = signOut(apiRequest('/api/v1/auth/session', { method: 'DELETE', headers: { cookie, origin: ORIGIN } }), daemon);
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBe('baton_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0');
    expect(daemon.security.identify(null, cookie)).toEqual({ kind: 'anonymous' });
  });

  it('clears the cookie even without a session', async () => {
    const { daemon } = await testFacade();
    const res = signOut(apiRequest('/api/v1/auth/session', { method: 'DELETE' }), daemon);
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0');
  });

  it('refuses a sign-out posted from a foreign Origin', async () => {
    const { daemon } = await testFacade();
    const cookie = await signedIn(daemon);
    expect(signOut(apiRequest('/api/v1/auth/session', { method: 'DELETE', headers: { cookie, origin: 'http://evil.example' } }), daemon).status).toBe(403);
    expect(daemon.security.identify(null, cookie).kind).toBe('session');
  });
});

describe('sign-in floods', () => {
  it('1,000 read sign-ins (from 1,000 addresses) never end the admin dashboard session, and at most ten are audited', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    const adminCookie = await signedIn(t.daemon);
    for (let i = 0; i < 1_000; i++) {
      expect((await signIn(signInRequest(READ_TOKEN, from(`10.1.${i >> 8}.${i & 255}`)), t.daemon)).status).toBe(200);
    }
    const me = await getSession(apiRequest('/api/v1/auth/session', { headers: { cookie: adminCookie } }), t.daemon);
    expect(await me.json()).toMatchObject({ role: 'admin' });
    const released = await forceRelease(
      apiRequest('/api/v1/locks/k/force-release', { method: 'POST', headers: { cookie: adminCookie, origin: ORIGIN }, body: '{}' }),
      t.daemon,
      { name: 'k' },
    );
    expect(released.status).toBe(404); // admitted as admin: nobody holds k
    const audited = t.audit.recent(2_000).filter((e) => e.action === 'sign-in' && e.result === 'ok');
    expect(audited.filter((e) => e.detail === 'role read')).toHaveLength(10);
    expect(audited.filter((e) => e.detail === 'role admin')).toHaveLength(1);
  });

  it('answers the 11th sign-in in a minute from one address 429 too-many-sign-ins with Retry-After, even with the right token; others go on', async () => {
    const t = await testFacade({ readToken: READ_TOKEN });
    for (let i = 0; i < 10; i++) expect((await signIn(signInRequest(i % 2 === 0 ? READ_TOKEN : 'wrong', from('10.2.0.1')), t.daemon)).status).not.toBe(429);
    const limited = await signIn(signInRequest(ADMIN_TOKEN, from('10.2.0.1')), t.daemon);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(limited.headers.get('set-cookie')).toBeNull();
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('too-many-sign-ins');
    expect((await signIn(signInRequest(ADMIN_TOKEN, from('10.2.0.2')), t.daemon)).status).toBe(200);
  });
});
