// The ops API through the real custom Next server (not the handlers alone): routing of odd
// lock names, JSON errors, tokens, cookies with Origin checks, the audit log on disk, and the
// event stream's coalescing and slow-reader limit.
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function grant(port: number, key: string, lease = 30): Promise<{ client: LineClient; token: string }> {
  const client = await connectClient(port);
  clients.push(client);
  client.send(`A ${key} ${lease} 0`);
  const line = await client.waitFor(new RegExp(`^A ${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\d+$`));
  return { client, token: line.split(' ')[2] as string };
}

test('lock names with slashes and non-ASCII letters route to their lock', async ({ request, baton }) => {
  for (const name of ['jobs/nightly/eu', 'café-ünïcode']) {
    const { token } = await grant(baton.lockPort, name);
    const res = await request.get(`/api/v1/locks/${encodeURIComponent(name)}`);
    expect(res.status()).toBe(200);
    const body = (await res.json()) as { name: string; holder: { token: string } };
    expect(body.name).toBe(name);
    expect(body.holder.token).toBe(token);
  }
  const page = (await (await request.get('/api/v1/locks?prefix=jobs%2F')).json()) as { locks: { name: string }[] };
  expect(page.locks.map((l) => l.name)).toEqual(['jobs/nightly/eu']);
});

test('the console refuses to be framed and refuses a rebound Host name', async ({ request, baton }) => {
  const page = await request.get('/');
  expect(page.headers()['x-frame-options']).toBe('DENY');
  expect(page.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(page.headers()['referrer-policy']).toBe('no-referrer');
  const rebound = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: baton.httpPort, path: '/api/v1/locks', headers: { host: `attacker.example:${baton.httpPort}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
  expect(rebound).toBe(403);
});

test('unknown locks, wrong methods and bad queries get JSON errors', async ({ request }) => {
  const missing = await request.get('/api/v1/locks/nobody-holds-this');
  expect(missing.status()).toBe(404);
  expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not-found');
  const wrong = await request.put('/api/v1/locks', { data: {} });
  expect(wrong.status()).toBe(405);
  expect(wrong.headers().allow).toContain('GET');
  expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('method-not-allowed');
  const bad = await request.get('/api/v1/locks?limit=0');
  expect(bad.status()).toBe(422);
});

test('force release by token frees only that holder, and the audit log keeps every attempt', async ({ request, baton }) => {
  const first = await grant(baton.lockPort, 'api-token');
  const stale = await request.post('/api/v1/locks/api-token/force-release', { headers: bearer, data: { token: String(BigInt(first.token) - 1n) } });
  expect(stale.status()).toBe(409);
  expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('stale-token');
  expect((await (await request.get('/api/v1/locks/api-token')).json()) as object).toMatchObject({ holder: { token: first.token } });
  const ok = await request.post('/api/v1/locks/api-token/force-release', { headers: bearer, data: { token: first.token } });
  expect(ok.status()).toBe(200);
  expect((await request.get('/api/v1/locks/api-token')).status()).toBe(404);
  // The audit log is appended without waiting for the write: read it until its lines are whole.
  const auditOf = async (target: string) => {
    const file = await readFile(join(baton.dataDir, 'audit.log'), 'utf8');
    try {
      return file
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { who: string; action: string; target: string; result: string })
        .filter((e) => e.target === target);
    } catch {
      return 'a line still being written';
    }
  };
  await expect
    .poll(() => auditOf('api-token'), { timeout: 5_000 })
    .toMatchObject([
      { who: 'bearer:admin', action: 'force-release', result: 'stale-token' },
      { who: 'bearer:admin', action: 'force-release', result: 'ok' },
    ]);
});

test('a signed-in cookie acts only from this origin', async ({ request, baton }) => {
  const signIn = await request.post('/api/v1/auth/session', { headers: { origin: baton.baseURL }, data: { token: ADMIN_TOKEN } });
  expect(signIn.status()).toBe(200);
  const cookie = signIn.headers()['set-cookie'] ?? '';
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/SameSite=Strict/i);
  const holder = await sessionClaim(baton.sessionPort, 'cookie-origin');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  const foreign = await request.post('/api/v1/locks/cookie-origin/force-release', { headers: { origin: 'http://evil.example' }, data: {} });
  expect(foreign.status()).toBe(403);
  const same = await request.post('/api/v1/locks/cookie-origin/force-release', { headers: { origin: baton.baseURL }, data: {} });
  expect(same.status()).toBe(200);
  await holder.waitFor(/^ERROR 0x04/);
});

/** Reads SSE frames from the real stream for `ms` milliseconds. */
async function readFrames(url: string, ms: number): Promise<{ event: string; data: string }[]> {
  const abort = new AbortController();
  const res = await fetch(url, { signal: abort.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const stop = setTimeout(() => abort.abort(), ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // aborted: the time is up
  } finally {
    clearTimeout(stop);
  }
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('event:'))
    .map((f) => ({
      event: /^event: (\S+)/.exec(f)?.[1] ?? '',
      data: f
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    }));
}

test('the event stream starts with a snapshot and sends at most 10 deltas a second however busy', async ({ baton }) => {
  const busy = await connectClient(baton.lockPort);
  clients.push(busy);
  let running = true;
  // About 2,000 grants a second on 20 keys (each with a 1 ms lease, so they expire and hand on).
  const churn = (async () => {
    while (running) {
      for (let i = 0; i < 20; i++) busy.send(`A churn/${i} 0.001 0`);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const frames = await readFrames(`${baton.baseURL}/api/v1/events`, 2_000);
  running = false;
  await churn;
  expect(frames[0]?.event).toBe('snapshot');
  expect((JSON.parse(frames[0]?.data ?? '{}') as { instanceId: string }).instanceId).toBe(baton.instanceId);
  const deltas = frames.filter((f) => f.event === 'delta');
  expect(deltas.length).toBeGreaterThan(5);
  expect(deltas.length).toBeLessThanOrEqual(21);
});

test('a reader that stops reading is dropped instead of buffered', async ({ request, baton }) => {
  // 4,000 locks with 200-byte names, all changing all the time: every delta is ~1.5 MB.
  const name = (i: number) => `${'x'.repeat(190)}/${i}`;
  const busy = await connectClient(baton.lockPort);
  clients.push(busy);
  const socket = connect({ host: '127.0.0.1', port: baton.httpPort });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause(); // never reads a byte
  socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:${baton.httpPort}\r\nAccept: text/event-stream\r\n\r\n`);
  const streams = async () => Number(/^baton_console_event_streams (\d+)$/m.exec(await (await request.get('/metrics')).text())?.[1]);
  await expect.poll(streams).toBe(1);
  let running = true;
  const churn = (async () => {
    while (running) {
      for (let i = 0; i < 4_000; i++) busy.send(`A ${name(i)} 0.05 0`);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await expect.poll(streams, { timeout: 30_000 }).toBe(0);
    expect(socket.destroyed).toBe(false); // dropped by the server, not by the reader going away
  } finally {
    running = false;
    await churn;
    socket.destroy();
  }
  expect((await request.get('/healthz')).status()).toBe(200);
});

test('a single node: restore and handoff answer 409 with the reason, the probes name role and phase', async ({ request }) => {
  for (const path of ['/api/v1/cluster/restore', '/api/v1/cluster/handoff']) {
    const res = await request.post(path, { headers: bearer, data: {} });
    expect(res.status(), path).toBe(409);
    expect(await res.json()).toMatchObject({ error: { code: 'conflict' } });
  }
  expect((await request.get('/api/v1/cluster/restore')).status()).toBe(405);
  expect(await (await request.get('/healthz')).json()).toMatchObject({ role: 'active', phase: 'active' });
  expect((await request.get('/readyz?role=active')).status()).toBe(200);
  expect((await request.get('/readyz?role=standby')).status()).toBe(503);
  expect(await (await request.get('/api/v1/cluster')).json()).toMatchObject({ clustered: false, phase: 'active', restore: { available: false, yielded: [] } });
  const audit = (await (await request.get('/api/v1/audit?limit=5', { headers: bearer })).json()) as { entries: Array<{ action: string; result: string }> };
  expect(audit.entries.slice(-2).map((e) => [e.action, e.result])).toEqual([
    ['restore', 'conflict'],
    ['handoff', 'conflict'],
  ]);
});
