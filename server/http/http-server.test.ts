// The console-less HTTP server serves the probes and the ops API's JSON routes from the route
// table, over a real socket: bodies, headers, methods and the SSE stream as the console would.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonFacade, FeedFacade, FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { createHttpServer, listenHttp } from './http-server.ts';
import { ADMIN_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function serve(daemon: DaemonFacade): Promise<(path: string, init?: RequestInit) => Promise<Response>> {
  const server = createHttpServer(daemon, '127.0.0.1');
  const address: AddressInfo = await listenHttp(server, '127.0.0.1', 0);
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (path, init) => fetch(`http://127.0.0.1:${address.port}${path}`, init);
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

describe('the console-less HTTP server', () => {
  it('serves the cluster view and the locks', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    const get = await serve(t.daemon);
    const cluster = await get('/api/v1/cluster');
    expect(cluster.status).toBe(200);
    expect(await cluster.json()).toMatchObject({ self: 'local', clustered: false, phase: 'active', active: 'local' });
    expect(await (await get('/api/v1/locks')).json()).toMatchObject({ locks: [{ name: 'a', holder: { token: holder.token.toString() } }] });
    expect(await (await get('/api/v1/locks/a')).json()).toMatchObject({ name: 'a', queue: [] });
  });

  it('runs a force-release with its JSON body, and kicks', async () => {
    const t = await testFacade();
    const first = t.hold('a');
    const next = t.hold('a');
    const third = t.hold('a');
    const call = await serve(t.daemon);
    const kicked = await call(`/api/v1/locks/a/waiters/${third.id}/kick`, { method: 'POST', headers: admin });
    expect(kicked.status).toBe(200);
    const res = await call('/api/v1/locks/a/force-release', { method: 'POST', headers: admin, body: JSON.stringify({ token: first.token.toString() }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ released: { token: first.token.toString() }, nextHolder: { token: next.token.toString() } });
    expect(t.audit.recent(5).map((e) => [e.action, e.result])).toEqual([
      ['kick', 'ok'],
      ['force-release', 'ok'],
    ]);
  });

  it('refuses a stale token in the body and a bad body as the console does', async () => {
    const t = await testFacade();
    t.hold('a');
    const call = await serve(t.daemon);
    expect((await call('/api/v1/locks/a/force-release', { method: 'POST', headers: admin, body: '{"token":"999"}' })).status).toBe(409);
    expect((await call('/api/v1/locks/a/force-release', { method: 'POST', headers: admin, body: '{' })).status).toBe(400);
    expect((await call('/api/v1/locks/a/force-release', { method: 'POST', body: '{}' })).status).toBe(401);
  });

  it('answers handoff and restore on a single node with 409 and the reason', async () => {
    const t = await testFacade();
    const call = await serve(t.daemon);
    for (const path of ['/api/v1/cluster/handoff', '/api/v1/cluster/restore']) {
      const res = await call(path, { method: 'POST', headers: admin, body: '{}' });
      expect(res.status, path).toBe(409);
      expect(await res.json()).toMatchObject({ error: { code: 'conflict' } });
    }
  });

  it('keeps the Origin check for session cookies: a foreign page cannot sign in', async () => {
    const t = await testFacade();
    const call = await serve(t.daemon);
    const res = await call('/api/v1/auth/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    expect(res.status).toBe(403);
    // The same host and port under another scheme is another origin too.
    for (const scheme of ['https', 'ftp']) {
      const other = await call('/api/v1/auth/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: `${scheme}://${new URL(res.url).host}` },
        body: JSON.stringify({ token: ADMIN_TOKEN }),
      });
      expect(other.status, scheme).toBe(403);
    }
    const ok = await call('/api/v1/auth/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.getSetCookie()).toHaveLength(1);
  });

  it('answers methods a route lacks with 405 and its Allow header, OPTIONS with 204, HEAD without a body', async () => {
    const t = await testFacade();
    const call = await serve(t.daemon);
    const refused = await call('/api/v1/cluster/handoff');
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await refused.json()).toMatchObject({ error: { code: 'method-not-allowed' } });
    const options = await call('/healthz', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const head = await call('/api/v1/stats', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers unknown paths with a JSON 404 and undecodable ones with a 400', async () => {
    const t = await testFacade();
    const call = await serve(t.daemon);
    const res = await call('/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not-found', message: 'not found: /nope' } });
    expect((await call('/')).status).toBe(404);
    expect((await call('/api/v1/locks/%zz')).status).toBe(400);
  });

  it('streams the SSE feed and unsubscribes when the client goes away', async () => {
    const t = await testFacade();
    let subscriber: FeedSubscriber | null = null;
    let from = '';
    let left = false;
    const feed: FeedFacade = {
      subscriberCount: 0,
      subscribe: (s: FeedSubscriber, client: string) => {
        subscriber = s;
        from = client;
        s.send(new TextEncoder().encode('event: snapshot\ndata: {}\n\n'));
        return {
          ok: true,
          pull: () => {},
          leave: () => {
            left = true;
          },
        };
      },
    };
    const call = await serve({ ...t.daemon, feed });
    const aborter = new AbortController();
    // A client cannot pick the address its streams are counted under.
    const res = await call('/api/v1/events', { signal: aborter.signal, headers: { 'x-baton-client-address': '10.9.9.9' } });
    expect(from).toBe('127.0.0.1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('event: snapshot')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text.startsWith('retry: 2000')).toBe(true);
    expect(subscriber).not.toBeNull();
    aborter.abort();
    await expect.poll(() => left).toBe(true);
  });
});
