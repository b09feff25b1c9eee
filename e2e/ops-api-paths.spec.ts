// The console's custom Next server answers odd API paths exactly as --no-console does: the same
// table as server/http/http-paths.test.ts, sent byte for byte (fetch and Playwright's request would
// normalize the paths first), every answer JSON with the security headers.
import { ODD_API_REQUESTS, rawRequest } from '../server/testing/odd-api-requests.ts';
import { expect, test } from './fixtures/baton-server.ts';

test('every odd API path gets its documented JSON error from the console too', async ({ baton }) => {
  for (const odd of ODD_API_REQUESTS) {
    const what = `${odd.method} ${odd.path}`;
    const answer = await rawRequest(baton.httpPort, odd.method, odd.path);
    expect([answer.status, answer.headers['content-type']], what).toEqual([odd.status, 'application/json']);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code, what).toBe(odd.code);
    expect(answer.headers['x-content-type-options'], what).toBe('nosniff');
    expect(answer.headers['content-security-policy'], what).toContain("frame-ancestors 'none'");
  }
});

test('a well-formed API path still reaches its route file through Next', async ({ baton }) => {
  const answer = await rawRequest(baton.httpPort, 'GET', '/api/v1/locks?limit=1');
  expect([answer.status, answer.headers['content-type']]).toEqual([200, 'application/json']);
  const body = JSON.parse(answer.body) as { locks: unknown };
  expect(Array.isArray(body.locks)).toBe(true);
});

test('API answers forbid everything a page could do; pages and their assets carry the common headers too', async ({ request, baton }) => {
  const api = await rawRequest(baton.httpPort, 'GET', '/api/v1/stats');
  expect(api.headers['content-security-policy']).toContain("default-src 'none'");
  const page = await request.get('/');
  const asset = /<script src="(\/_next\/static\/[^"]+\.js)"/.exec(await page.text())?.[1];
  expect(asset).toBeDefined();
  for (const answer of [api, await rawRequest(baton.httpPort, 'GET', asset as string)]) {
    expect(answer.status).toBe(200);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-frame-options']).toBe('DENY');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  }
});
