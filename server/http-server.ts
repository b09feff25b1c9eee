// The HTTP port without the console (`baton serve --no-console`, and tests that need no
// dashboard): /healthz, /readyz and /metrics only, read through the same facade the console's
// route handlers use.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERRORS, type ErrorName } from '../lib/errors.ts';
import type { DaemonFacade } from './daemon-facade.ts';
import { refuseHost } from './ops/host-guard.ts';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, name: ErrorName, detail?: string): void {
  const spec = ERRORS[name];
  sendJson(res, spec.httpStatus, { error: { code: name, message: detail ? `${spec.message}: ${detail}` : spec.message } });
}

export function createHttpServer(daemon: DaemonFacade, bindHost: string): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const refusal = refuseHost(bindHost, req.headers.host);
    if (refusal !== null) {
      sendError(res, 'forbidden', refusal);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendError(res, 'method-not-allowed', `${req.method} ${path}`);
      return;
    }
    if (path === '/healthz') {
      const state = daemon.state();
      sendJson(res, 200, {
        status: state === 'draining' ? 'draining' : 'ok', state, instanceId: daemon.instanceId,
        pid: process.pid, tokenHighWater: daemon.engine.tokenHighWater.toString(),
      });
    } else if (path === '/readyz') {
      const ready = daemon.state() === 'serving';
      sendJson(res, ready ? 200 : 503, { ready, state: daemon.state(), role: daemon.role() });
    } else if (path === '/metrics') {
      if (!daemon.security.readsOpen && daemon.security.identify(req.headers.authorization ?? null, req.headers.cookie ?? null).kind === 'anonymous') {
        sendError(res, 'unauthorized', 'reads on this node need a token');
        return;
      }
      daemon.metrics().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType });
          res.end(body);
        },
        (err: unknown) => sendJson(res, 500, { error: { code: 'internal', message: String(err) } }),
      );
    } else {
      sendError(res, 'not-found', path);
    }
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
