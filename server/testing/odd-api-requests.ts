// API requests that Next would read differently from the route table (bad percent-encoding, a
// path no route serves, dot segments, backslashes), with the one JSON answer each must get in
// both modes. The console-less server's test (server/http/http-paths.test.ts) and the console's
// (e2e/ops-api-paths.spec.ts) run this same table, so the modes cannot drift apart.
import { request } from 'node:http';

export interface OddRequest {
  method: 'GET' | 'POST';
  /** Sent as is: node's client neither normalizes nor re-encodes it (fetch would). */
  path: string;
  status: number;
  code: string;
}

export const ODD_API_REQUESTS: readonly OddRequest[] = [
  { method: 'GET', path: '/api/v1/locks/%zz', status: 400, code: 'bad-request' },
  { method: 'POST', path: '/api/v1/locks/%zz/force-release', status: 400, code: 'bad-request' },
  { method: 'GET', path: '/api/v1/locks/%C0%AF', status: 400, code: 'bad-request' },
  { method: 'GET', path: '/api/v1/locks/x%', status: 400, code: 'bad-request' },
  { method: 'POST', path: '/api/v1/locks/k/waiters/%zz/kick', status: 400, code: 'bad-request' },
  { method: 'GET', path: '/api/v1/locks/jobs/nightly', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api/v1/locks/', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api/v1/nope', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api/', status: 404, code: 'not-found' },
  { method: 'GET', path: '/healthz/', status: 404, code: 'not-found' },
  // Valid lock names that a URL parser would resolve or rewrite: still the lock API's answer.
  { method: 'GET', path: '/api/v1/locks/%2e%2e', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api/v1/locks/..', status: 404, code: 'not-found' },
  { method: 'GET', path: '/api/v1/locks/a\\b', status: 404, code: 'not-found' },
  // A mutation on such a name is still checked for the admin token first.
  { method: 'POST', path: '/api/v1/locks/%2e%2e/force-release', status: 401, code: 'unauthorized' },
];

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with `path` exactly as given, on a fresh connection. */
export function rawRequest(port: number, method: string, path: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, agent: false, headers: method === 'POST' ? { 'content-type': 'application/json', 'content-length': '2' } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}
