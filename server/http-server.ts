// The daemon's HTTP port. For now: /healthz, /readyz and /metrics (the operator console
// issue replaces this with the custom Next.js server and keeps these three).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { ERRORS, type ErrorName } from '../lib/errors.ts';

export interface HealthSource {
  instanceId: string;
  state(): 'starting' | 'serving' | 'draining';
  tokenHighWater(): bigint;
}

function sendJson(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(text);
}

function sendError(res: import('node:http').ServerResponse, name: ErrorName, detail?: string): void {
  const spec = ERRORS[name];
  sendJson(res, spec.httpStatus, { error: { code: name, message: detail ? `${spec.message}: ${detail}` : spec.message } });
}

export function createHttpServer(health: HealthSource, registry: Registry): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendError(res, 'method-not-allowed', `${req.method} ${path}`);
      return;
    }
    if (path === '/healthz') {
      const state = health.state();
      sendJson(res, 200, {
        status: state === 'draining' ? 'draining' : 'ok', state, instanceId: health.instanceId,
        pid: process.pid, tokenHighWater: health.tokenHighWater().toString(),
      });
    } else if (path === '/readyz') {
      const ready = health.state() === 'serving';
      sendJson(res, ready ? 200 : 503, { ready, state: health.state() });
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
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
