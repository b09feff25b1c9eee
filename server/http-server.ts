// The HTTP port without the console (`baton serve --no-console`, and tests that need no
// dashboard): /healthz, /readyz and /metrics only. It serves the very handlers the console's
// route files serve (server/ops-api/probes.ts), through the same facade, so the two modes
// cannot drift apart.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERRORS, type ErrorName, errorBody } from '../lib/errors.ts';
import type { DaemonFacade } from './daemon-facade.ts';
import { refuseHost } from './ops/host-guard.ts';
import { getHealthz, getMetrics, getReadyz } from './ops-api/probes.ts';

type ProbeHandler = (req: Request, daemon: DaemonFacade) => Response | Promise<Response>;
const PROBES: Record<string, ProbeHandler> = { '/healthz': getHealthz, '/readyz': getReadyz, '/metrics': getMetrics };

function sendError(res: ServerResponse, name: ErrorName, detail?: string, headers: Record<string, string> = {}): void {
  res.writeHead(ERRORS[name].httpStatus, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(errorBody(name, detail)));
}

/** The Web Request the handlers take. The probes read only the credentials, so only those are carried over. */
function webRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  if (req.headers.authorization !== undefined) headers.set('authorization', req.headers.authorization);
  if (req.headers.cookie !== undefined) headers.set('cookie', req.headers.cookie);
  return new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), { method: req.method, headers });
}

async function send(res: ServerResponse, answer: Response): Promise<void> {
  const body = await answer.text();
  res.writeHead(answer.status, Object.fromEntries(answer.headers));
  res.end(body); // node leaves the body out of a HEAD answer
}

export function createHttpServer(daemon: DaemonFacade, bindHost: string): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const refusal = refuseHost(bindHost, req.headers.host);
    if (refusal !== null) {
      sendError(res, 'forbidden', refusal);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 'method-not-allowed', `${req.method} ${path}`, { allow: 'GET, HEAD' });
      return;
    }
    const handler = PROBES[path];
    if (handler === undefined) {
      sendError(res, 'not-found', path);
      return;
    }
    Promise.resolve()
      .then(() => handler(webRequest(req), daemon))
      .then((answer) => send(res, answer))
      .catch((err: unknown) => sendError(res, 'internal', err instanceof Error ? err.message : String(err)));
  });
  server.keepAliveTimeout = 5_000;
  return server;
}

export function listenHttp(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
