// The HTTP port of a real daemon (`--no-console`, the same handlers the console serves) against
// callers who may not change anything and requests that are not what the ops API takes:
// refusals are JSON with the documented status, nothing changes, nothing crashes, and the
// port still serves afterwards. Slow and malformed HTTP is answered (408, 431, 400) and closed.
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { daemon, open, runTeardown, teardown } from '../testing/fuzz-harness.ts';
import { eventually, type RawConnection, sleep } from '../testing/fuzz-helpers.ts';
import type { Daemon } from '../daemon/daemon.ts';
import { answerClientErrors, httpServerOptions, listenHttp } from './http-server.ts';

afterEach(runTeardown);

const ADMIN = 'admin-token-for-bad-input';
const READ = 'read-token-for-bad-input';
/** For the tests of slow requests; the others keep the default, so a busy machine never times out a request they send. */
const IO_TIMEOUT_MS = 500;

async function start(ioTimeoutMs = 5_000): Promise<{ d: Daemon; call: (path: string, init?: RequestInit) => Promise<Response>; holderToken: string }> {
  const d = await daemon({ adminToken: ADMIN, readToken: READ, ioTimeoutMs });
  const call = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${d.httpAddress.port}${path}`, init);
  // A real holder and a real waiter, so that a mutation that slipped through would show.
  const holder = await open(d.lockAddress.port);
  holder.write('A held 600 0\nA held 600 0\n');
  await holder.until(() => holder.replies().lines.length >= 1 && d.engine.waiterCount === 1, 3_000, 'a grant and a waiter');
  const holderToken = (holder.replies().lines[0] as string).split(' ')[2] as string;
  return { d, call, holderToken };
}

/** Status and JSON error code of an answer; fails on any other body shape. */
async function refusal(res: Response): Promise<[number, string]> {
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error.message).toBe('string');
  return [res.status, body.error.code];
}

async function signIn(call: (path: string, init?: RequestInit) => Promise<Response>): Promise<string> {
  const res = await call('/api/v1/auth/session', { method: 'POST', body: JSON.stringify({ token: ADMIN }) });
  expect(res.status).toBe(200);
  return (res.headers.getSetCookie()[0] as string).split(';')[0] as string;
}

/** Nothing moved: the same holder with the same token, the same waiter, and reads still answer. */
async function unchanged(d: Daemon, call: (path: string, init?: RequestInit) => Promise<Response>, holderToken: string): Promise<void> {
  expect(d.engine.lock('held')?.holder?.token.toString()).toBe(holderToken);
  expect(d.engine.waiterCount).toBe(1);
  const health = await call('/healthz');
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok' });
  const read = await call('/api/v1/locks/held', { headers: { authorization: `Bearer ${READ}` } });
  expect(await read.json()).toMatchObject({ name: 'held', holder: { token: holderToken }, queueLength: 1 });
}

describe('HTTP mutations by callers who may not make them', () => {
  it('refuses every mutation without a token, with a wrong one, with the read token, or cross-site on a cookie, and changes nothing', async () => {
    const { d, call, holderToken } = await start();
    const waiterId = d.engine.lock('held')?.queue()[0]?.id as number;
    const cookie = await signIn(call);
    const own = `http://127.0.0.1:${d.httpAddress.port}`;
    const mutations = [
      ['/api/v1/locks/held/force-release', JSON.stringify({ token: holderToken })],
      [`/api/v1/locks/held/waiters/${waiterId}/kick`, '{}'],
      ['/api/v1/cluster/handoff', '{}'],
      ['/api/v1/cluster/restore', '{}'],
    ] as const;
    const callers: Array<[string, Record<string, string>, number, string]> = [
      ['no credentials', {}, 401, 'unauthorized'],
      ['a wrong bearer token', { authorization: 'Bearer not-the-admin-token' }, 401, 'unauthorized'],
      ['a malformed Authorization header', { authorization: `Basic ${ADMIN}` }, 401, 'unauthorized'],
      ['a wrong cookie', { cookie: 'baton_session=forged', origin: own }, 401, 'unauthorized'],
      ['the read token', { authorization: `Bearer ${READ}` }, 403, 'forbidden'],
      ['the cookie from another origin', { cookie, origin: 'http://evil.example' }, 403, 'forbidden'],
      ['the cookie with Origin "null"', { cookie, origin: 'null' }, 403, 'forbidden'],
      ['the cookie without an Origin', { cookie }, 403, 'forbidden'],
      ['the cookie from another port of this host', { cookie, origin: 'http://127.0.0.1:1' }, 403, 'forbidden'],
      ['the cookie from https at this host and port', { cookie, origin: own.replace('http:', 'https:') }, 403, 'forbidden'],
      ['the cookie from ftp at this host and port', { cookie, origin: own.replace('http:', 'ftp:') }, 403, 'forbidden'],
    ];
    for (const [path, body] of mutations) {
      for (const [who, headers, status, code] of callers) {
        const res = await call(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        expect(await refusal(res), `${who}: POST ${path}`).toEqual([status, code]);
      }
    }
    await unchanged(d, call, holderToken);
    // The same cookie from our own origin is allowed: the refusals above were about the caller.
    const kicked = await call(`/api/v1/locks/held/waiters/${waiterId}/kick`, { method: 'POST', headers: { cookie, origin: own } });
    expect(kicked.status).toBe(200);
  });
});

describe('HTTP bodies the ops API does not take', () => {
  const admin = { authorization: `Bearer ${ADMIN}` };

  it('answers a body over 16 KiB with 413 and a malformed one with 400, whatever the content type', async () => {
    const { d, call, holderToken } = await start();
    const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
      call('/api/v1/locks/held/force-release', { method: 'POST', headers: { ...admin, ...headers }, body });
    for (const size of [16 * 1024 + 1, 1 << 20, 20 << 20]) {
      expect(await refusal(await post(`{"token":"${'1'.repeat(size)}"}`)), `${size} bytes`).toEqual([413, 'body-too-large']);
    }
    for (const body of ['{', '{"token":', 'token=1', '\u0000', '{"token": "1"}}', '[1,', Buffer.from([0xff, 0xfe, 0x7b])]) {
      expect(await refusal(await post(body, { 'content-type': 'application/json' })), JSON.stringify(String(body))).toEqual([400, 'bad-request']);
    }
    // The type is not checked (curl -d sends JSON as a form): the body decides.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'nonsense']) {
      expect(await refusal(await post('{"token":"999999"}', { 'content-type': type })), type).toEqual([409, 'stale-token']);
    }
    expect(await refusal(await post('{"token":"1","extra":true}'))).toEqual([422, 'invalid-input']);
    await unchanged(d, call, holderToken);
  });

  it('reads and drops the rest of a refused body, so the same connection serves the next request', async () => {
    const { d, call, holderToken } = await start();
    const c = await open(d.httpAddress.port);
    const size = 4 << 20;
    c.write(`POST /api/v1/locks/held/force-release HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Length: ${size}\r\n\r\n`);
    c.write(Buffer.alloc(size, 0x20));
    c.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const statuses = () => c.replies().lines.filter((l) => l.startsWith('HTTP/1.1 '));
    await c.until(() => statuses().length === 2 || c.closed, 4_000, 'both answers');
    expect(statuses()).toEqual(['HTTP/1.1 413 Payload Too Large\r', 'HTTP/1.1 200 OK\r']);
    await unchanged(d, call, holderToken);
  });

  it('answers random bodies with a JSON refusal, never a crash', async () => {
    const { d, call, holderToken } = await start();
    const body = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.json({ maxDepth: 3 }),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      fc.record({ token: fc.oneof(fc.string(), fc.bigInt().map(String), fc.double(), fc.constant(null)) }).map((o) => JSON.stringify(o)),
    );
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.constantFrom('/api/v1/locks/nobody/force-release', '/api/v1/locks/nobody/waiters/1/kick', '/api/v1/cluster/restore'),
        async (b, path) => {
          const res = await call(path, { method: 'POST', headers: admin, body: b });
          // The lock named here does not exist: a body that passed the checks is a 404 (or 409 on a single node).
          const [status] = await refusal(res);
          expect([400, 404, 409, 413, 422]).toContain(status);
        },
      ),
      { numRuns: 100 },
    );
    await unchanged(d, call, holderToken);
  });

  it('answers 300 concurrent bad requests, each with its JSON error, and serves on', async () => {
    const { d, call, holderToken } = await start();
    const bad: Array<[() => Promise<Response>, number]> = [
      [() => call('/api/v1/locks/held/force-release', { method: 'POST', body: '{}' }), 401],
      [() => call('/api/v1/locks/held/force-release', { method: 'POST', headers: admin, body: '{' }), 400],
      [() => call('/api/v1/locks/held/force-release', { method: 'POST', headers: admin, body: 'x'.repeat(40_000) }), 413],
      [() => call('/api/v1/locks/held/force-release', { method: 'POST', headers: admin, body: '{"token":"nope"}' }), 422],
      [() => call('/api/v1/locks/%zz/force-release', { method: 'POST', headers: admin }), 400],
      [() => call('/api/v1/locks', { headers: { authorization: 'Bearer wrong-wrong-wrong' } }), 401],
      [() => call('/api/v1/locks/held/force-release'), 405],
    ];
    const answers = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const [send, status] = bad[i % bad.length] as (typeof bad)[number];
        return [(await refusal(await send()))[0], status];
      }),
    );
    for (const [got, want] of answers) expect(got).toBe(want);
    await unchanged(d, call, holderToken);
  });
});

describe('HTTP that is slow or not HTTP', () => {
  /** Sends `bytes` (slowly, a piece every `everyMs`, until the server closes), and returns what came back. */
  async function raw(d: Daemon, pieces: string[], everyMs = 0): Promise<RawConnection> {
    const c = await open(d.httpAddress.port);
    for (const piece of pieces) {
      if (c.closed) break;
      c.write(piece);
      await sleep(everyMs);
    }
    await c.until(() => c.closed, IO_TIMEOUT_MS * 2 + 3_000, 'the server to close');
    return c;
  }
  const statusOf = (c: RawConnection): string => c.replies().lines[0]?.trimEnd() ?? '';

  it('answers an endless chunked body 413 once past the cap, reads the rest until the io-timeout, and never answers twice', async () => {
    const { d, call, holderToken } = await start(IO_TIMEOUT_MS);
    const endless = await open(d.httpAddress.port);
    endless.write(`POST /api/v1/locks/held/force-release HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const started = performance.now();
    while (!endless.closed) {
      endless.write(`1000\r\n${' '.repeat(4096)}\r\n`);
      await sleep(10);
    }
    expect(performance.now() - started).toBeLessThan(IO_TIMEOUT_MS + 4_000);
    const answer = endless.replies();
    expect(answer.lines[0]).toBe('HTTP/1.1 413 Payload Too Large\r');
    // node's own timeout would add a 408 after the 413 on the same socket.
    expect(
      answer.lines.filter((l) => l.startsWith('HTTP/')),
      JSON.stringify(answer),
    ).toHaveLength(1);
    expect(answer.lines.join('\n')).toContain('"code":"body-too-large"');
    await unchanged(d, call, holderToken);
  });

  it('closes a client that dribbles its headers at the io-timeout with 408, and serves others meanwhile', async () => {
    const { d, call, holderToken } = await start(IO_TIMEOUT_MS);
    const started = performance.now();
    // One header line every 100 ms, forever: never a complete request.
    const dribbler = raw(d, ['GET /healthz HTTP/1.1\r\n', ...Array.from({ length: 200 }, (_, i) => `X-Slow-${i}: 1\r\n`)], 100);
    const silent = raw(d, []);
    const half = raw(d, ['POST /api/v1/auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"tok']);
    await sleep(100);
    await unchanged(d, call, holderToken);
    for (const c of [await dribbler, await half]) {
      expect(statusOf(c), JSON.stringify(c.replies())).toBe('HTTP/1.1 408 Request Timeout');
      expect(c.replies().tail).toMatch(/^\{"error":\{"code":"io-timeout",/);
    }
    expect((await silent).closed).toBe(true);
    // Cut at the io-timeout, give or take the check interval; seconds, not node's 60 s default.
    expect(performance.now() - started).toBeLessThan(IO_TIMEOUT_MS + 4_000);
    await unchanged(d, call, holderToken);
  });

  it('answers headers over 16 KiB with 431 and bytes that are not HTTP with 400, as JSON', async () => {
    const { d, call, holderToken } = await start();
    const big = await raw(d, [`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`]);
    expect(statusOf(big)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(big.replies().tail).toMatch(/^\{"error":\{"code":"headers-too-large",/);
    for (const junk of ['\u0000\u0001\u0002garbage\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /healthz HTTP/1.1\r\nContent-Length: -1\r\n\r\n']) {
      const c = await raw(d, [junk]);
      expect(statusOf(c), JSON.stringify(junk)).toBe('HTTP/1.1 400 Bad Request');
      expect(c.replies().tail).toMatch(/^\{"error":\{"code":"bad-request",/);
    }
    await unchanged(d, call, holderToken);
  });
});

/**
 * A client that keeps its side open after the server's FIN (allowHalfOpen), as a careless or
 * hostile one may: it can go on sending, and it never closes on its own.
 */
async function halfOpen(port: number): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => resolve(s));
    s.once('error', reject);
  });
  let received = '';
  let closed = false;
  socket.on('data', (b: Buffer) => (received += b.toString('latin1')));
  // The reset of a server that closed while we wrote is what some tests wait for.
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  teardown.push(() => void socket.destroy());
  return { socket, received: () => received, closed: () => closed };
}

/**
 * Waits for the server to have closed its side entirely: a byte written to a closed socket
 * is answered with a reset, while a server still half-open takes it in silently. `probe` is
 * a byte the request in progress could take (a header value, a body), so the server has no
 * other reason to close.
 */
async function serverClosed(c: { socket: Socket; closed: () => boolean }, probe: string, ms: number): Promise<void> {
  const started = performance.now();
  while (!c.closed()) {
    if (performance.now() - started > ms) throw new Error(`the server still held the socket after ${ms} ms`);
    if (!c.socket.destroyed) c.socket.write(probe);
    await sleep(100);
  }
}

describe('HTTP bytes sent after a failure answer', () => {
  const statuses = (text: string): string[] => text.split('\r\n').filter((l) => l.startsWith('HTTP/1.1 '));

  it('never runs a mutation whose body arrives after its 408, never answers it twice, and closes the socket', async () => {
    const { d, call, holderToken } = await start(IO_TIMEOUT_MS);
    const body = JSON.stringify({ token: holderToken });
    const c = await halfOpen(d.httpAddress.port);
    c.socket.write(
      `POST /api/v1/locks/held/force-release HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await eventually(() => c.received().includes('"code":"io-timeout"'), IO_TIMEOUT_MS + 4_000, 'the 408');
    c.socket.write(body.slice(5));
    // Long enough for the request to have run, had it gone on.
    await sleep(300);
    await unchanged(d, call, holderToken);
    await serverClosed(c, ' ', 5_000);
    expect(statuses(c.received())).toEqual(['HTTP/1.1 408 Request Timeout']);
    await unchanged(d, call, holderToken);
  });

  it('closes a socket whose client stays silent and open after its 408', async () => {
    const { d, call, holderToken } = await start(IO_TIMEOUT_MS);
    const c = await halfOpen(d.httpAddress.port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    await eventually(() => c.received().includes('"code":"io-timeout"'), IO_TIMEOUT_MS + 4_000, 'the 408');
    const answered = performance.now();
    await serverClosed(c, 'a', 5_000);
    expect(performance.now() - answered).toBeLessThan(5_000);
    expect(statuses(c.received())).toEqual(['HTTP/1.1 408 Request Timeout']);
    await unchanged(d, call, holderToken);
  });

  it('gives a handler that reads the body itself (as Next does) nothing past the 408', async () => {
    const seen: string[] = [];
    const server = createServer(httpServerOptions(IO_TIMEOUT_MS), (req, res) => {
      void (async () => {
        let text = '';
        for await (const chunk of req) text += String(chunk);
        seen.push(text);
        res.end('ran');
      })().catch(() => {});
    });
    answerClientErrors(server, IO_TIMEOUT_MS);
    teardown.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = await listenHttp(server, '127.0.0.1', 0);
    const c = await halfOpen(port);
    c.socket.write('POST /anything HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n12345');
    await eventually(() => c.received().includes('"code":"io-timeout"'), IO_TIMEOUT_MS + 4_000, 'the 408');
    c.socket.write('67890');
    await sleep(300);
    await serverClosed(c, ' ', 5_000);
    expect(seen).toEqual([]);
    expect(statuses(c.received())).toEqual(['HTTP/1.1 408 Request Timeout']);
  });
});
