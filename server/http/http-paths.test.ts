// The console-less HTTP port (`--no-console`) of a real daemon: every path under /api/ and the
// probes is answered as JSON, whatever its encoding, and every answer carries the security
// headers. e2e/ops-api-paths.spec.ts runs the same table against the console.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../daemon/daemon.ts';
import { ODD_API_REQUESTS, rawRequest } from '../testing/odd-api-requests.ts';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

async function daemon(): Promise<Daemon> {
  const d = await startDaemon({
    host: '127.0.0.1',
    lockPort: 0,
    sessionPort: 0,
    httpPort: 0,
    dataDir: null,
    drainMs: 0,
    adminToken: 'admin-token-0123456789abcdef',
  });
  teardown.push(() => d.shutdown());
  return d;
}

function expectSecurityHeaders(headers: Record<string, string | string[] | undefined>, what: string): void {
  expect(headers['x-content-type-options'], what).toBe('nosniff');
  expect(headers['x-frame-options'], what).toBe('DENY');
  expect(headers['referrer-policy'], what).toBe('no-referrer');
  expect(headers['content-security-policy'], what).toContain("frame-ancestors 'none'");
  expect(headers['content-security-policy'], what).toContain("default-src 'none'");
}

describe('the --no-console HTTP port', () => {
  it('answers every odd API path with its documented JSON error', async () => {
    const d = await daemon();
    for (const odd of ODD_API_REQUESTS) {
      const what = `${odd.method} ${odd.path}`;
      const answer = await rawRequest(d.httpAddress.port, odd.method, odd.path);
      expect([answer.status, answer.headers['content-type']], what).toEqual([odd.status, 'application/json']);
      expect((JSON.parse(answer.body) as { error: { code: string } }).error.code, what).toBe(odd.code);
      expectSecurityHeaders(answer.headers, what);
    }
  });

  it('puts nosniff, frame-ancestors and no-referrer on the probes, metrics, the JSON API and its errors', async () => {
    const d = await daemon();
    for (const path of ['/healthz', '/readyz', '/metrics', '/api/v1/locks', '/api/v1/stats', '/nope']) {
      const answer = await rawRequest(d.httpAddress.port, 'GET', path);
      expect(answer.status, path).toBeLessThan(500);
      expectSecurityHeaders(answer.headers, path);
    }
  });

  it('puts them on the answer to bytes that are not HTTP too', async () => {
    const d = await daemon();
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(d.httpAddress.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let got = '';
      socket
        .setEncoding('utf8')
        .on('data', (c: string) => (got += c))
        .on('close', () => resolve(got))
        .on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toContain('x-content-type-options: nosniff\r\n');
    expect(text).toContain("frame-ancestors 'none'");
  });
});

describe('sign-ins on the --no-console port', () => {
  it('are limited per socket address: a client cannot pick another address with a header', async () => {
    const d = await daemon();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await fetch(`http://127.0.0.1:${d.httpAddress.port}/api/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-baton-client-address': `10.9.9.${i}` },
        body: JSON.stringify({ token: 'wrong' }),
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
  });
});
