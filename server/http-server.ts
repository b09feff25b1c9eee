// The HTTP port without the console (`baton serve --no-console`, and tests that need no
// dashboard): the probes and the ops API's JSON routes (the SSE feed included), but no pages.
// It serves the very handlers the console's route files serve (server/ops-api/api-routes.ts),
// through the same facade, so the two modes cannot drift apart.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ERRORS, type ErrorName, errorBody } from '../lib/errors.ts';
import type { DaemonFacade } from './daemon-facade.ts';
import { refuseHost } from './ops/host-guard.ts';
import { dispatch, matchRoute } from './ops-api/api-routes.ts';

function sendError(res: ServerResponse, name: ErrorName, detail?: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(ERRORS[name].httpStatus, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(errorBody(name, detail)));
}

/**
 * The Web Request the handlers take, as Next would build it: every header (the Origin and Host
 * checks of mutations read them), the body streamed for POST and DELETE, and a signal that
 * aborts when the client goes away (the SSE feed unsubscribes on it).
 */
function webRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), {
    method, headers, signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

/** Streams the answer: the SSE feed's body never ends on its own. */
async function send(res: ServerResponse, answer: Response): Promise<void> {
  const headers: Record<string, string | string[]> = Object.fromEntries(answer.headers);
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(answer.status, headers);
  if (answer.body === null) {
    res.end();
    return;
  }
  // node leaves the body out of a HEAD answer; the stream is still drained and closed.
  await pipeline(Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>), res).catch(() => {
    // The client went away mid-stream: nothing left to answer.
  });
}

export function createHttpServer(daemon: DaemonFacade, bindHost: string): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const refusal = refuseHost(bindHost, req.headers.host);
    if (refusal !== null) {
      sendError(res, 'forbidden', refusal);
      return;
    }
    const match = matchRoute(path);
    if (match.kind !== 'found') {
      if (match.kind === 'bad-path') sendError(res, 'bad-request', `${path}: a path segment does not URL-decode`);
      else sendError(res, 'not-found', path);
      return;
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    Promise.resolve()
      .then(() => dispatch(match.route, webRequest(req, gone.signal), daemon, match.params))
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
