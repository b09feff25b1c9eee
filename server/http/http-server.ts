// The HTTP port without the console (`baton serve --no-console`, and tests that need no
// dashboard): the probes, /metrics and the ops API's JSON routes (the SSE feed included), but
// no pages: the dashboard's page answers a JSON 404 saying the console is off.
// It serves the very handlers the console's route files serve (server/api-handlers/api-routes.ts),
// through the same facade, so the two modes cannot drift apart.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ERRORS, type ErrorName, errorBody } from '../../lib/errors.ts';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { watchdogInterval } from '../lines/line-listener.ts';
import { refuseHost } from '../console-auth/host-guard.ts';
import { CONSOLE_PAGES, consoleOffDetail, type RouteMatch, dispatch, matchRoute } from '../api-handlers/api-routes.ts';
import { CLIENT_ADDRESS_HEADER } from '../api-handlers/client-address.ts';
import { MAX_BODY_BYTES } from '../api-handlers/request-input.ts';
import { RAW_API_SECURITY_HEADERS, setApiSecurityHeaders } from './security-headers.ts';

function sendError(res: ServerResponse, name: ErrorName, detail?: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(ERRORS[name].httpStatus, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(errorBody(name, detail)));
}

/**
 * The route `path` names, or null after answering the JSON 404 (no route) or 400 (a parameter
 * that does not URL-decode, such as `%zz` or `%C0%AF`). Both servers ask this first for every
 * API path, so neither mode hands such a path to code that would answer it otherwise.
 */
export function routeOrRefuse(res: ServerResponse, path: string): Extract<RouteMatch, { kind: 'found' }> | null {
  const match = matchRoute(path);
  if (match.kind === 'found') return match;
  if (match.kind === 'bad-path') sendError(res, 'bad-request', `${path}: a path segment does not URL-decode`);
  else sendError(res, 'not-found', path);
  return null;
}

/**
 * The Web Request the handlers take, as Next would build it: every header (the Origin and Host
 * checks of mutations read them), the body for POST and DELETE, and a signal that aborts when
 * the client goes away (the SSE feed unsubscribes on it).
 */
function webRequest(req: IncomingMessage, body: Buffer | null, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  // Set by us from the socket, never taken from the client (client-address.ts).
  headers.set(CLIENT_ADDRESS_HEADER, req.socket.remoteAddress ?? '?');
  return new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), { method: req.method ?? 'GET', headers, signal, ...(body === null ? {} : { body }) });
}

type Body = { kind: 'read'; bytes: Buffer | null } | { kind: 'too-large' } | { kind: 'gone' };

/**
 * Reads the body of a POST or DELETE (null for other methods): every body of the ops API is a
 * few fields, so it is read whole before the handler runs, up to MAX_BODY_BYTES (or the route's own
 * maxBodyBytes: the bulk release by client takes up to 10,000 tokens). Past that the
 * request is answered 413 at once and the rest is read and dropped (bounded by the io-timeout)
 * rather than refused with a reset, which could cost the client the answer.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Body> {
  if (req.method !== 'POST' && req.method !== 'DELETE') return Promise.resolve({ kind: 'read', bytes: null });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (body: Body): void => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('aborted', onGone);
      if (body.kind === 'too-large') req.resume(); // no listener left: what comes is dropped
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) settle({ kind: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = (): void => settle({ kind: 'read', bytes: size === 0 ? null : Buffer.concat(chunks) });
    const onGone = (): void => settle({ kind: 'gone' });
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      settle({ kind: 'too-large' });
      return;
    }
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('aborted', onGone);
  });
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

/**
 * How every HTTP server of the daemon is made (this one and the console's). Node's defaults
 * give a client 60 s for its headers and 5 minutes for its request, checked every 30 s, so a
 * few hundred clients dribbling bytes would hold as many sockets for minutes. The rule of the
 * line protocols applies instead: a request (headers, and a body of at most 16 KiB) must arrive
 * within the io-timeout, checked as often as their watchdog checks. Answers are not bounded by
 * it (the event stream runs for hours).
 */
export function httpServerOptions(ioTimeoutMs: number): ServerOptions {
  return {
    headersTimeout: ioTimeoutMs,
    requestTimeout: ioTimeoutMs,
    connectionsCheckingInterval: watchdogInterval(ioTimeoutMs),
    keepAliveTimeout: 5_000,
  };
}

const CLIENT_ERRORS: Readonly<Record<string, ErrorName>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'io-timeout',
  HPE_HEADER_OVERFLOW: 'headers-too-large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'headers-too-large',
};

/**
 * Sockets whose client was told its request failed (408, 431, 400). Node allows half-open
 * connections and its timeout does not stop the parser, so bytes sent after our answer would
 * still complete that request (or start another): a mutation would run although the client
 * was told it failed. Handlers check this before they act.
 */
const failedSockets = new WeakSet<Duplex>();

/** This socket's request was answered as failed: it must not run, nor be answered again. */
export function answeredAsFailed(socket: Duplex): boolean {
  return failedSockets.has(socket);
}

/**
 * After a failure answer: stop reading (node's HTTP server turns a socket's pause into a
 * read stop, so its parser gets no more bytes), and destroy the socket after a short grace,
 * which lets the answer leave before a reset could cost the client it. Without this a client
 * that ignores our FIN kept the socket forever: nothing else times it out.
 */
function closeAfterAnswer(socket: Duplex, ioTimeoutMs: number): void {
  failedSockets.add(socket);
  socket.pause();
  const timer = setTimeout(() => socket.destroy(), Math.min(ioTimeoutMs, 1_000));
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * What node answers on its own (a request too slow, headers over 16 KiB, bytes that are not
 * HTTP) gets the API's JSON error shape too, then the connection closes. Node's own check is
 * kept: nothing is written once an answer on this socket has begun.
 */
export function answerClientErrors(server: Server, ioTimeoutMs: number): void {
  // Sockets whose request was answered before its body ended (a refusal, a 413): node goes on
  // reading the rest to keep the connection, and its timeout must not send a second answer to
  // that same request (node's default handler would: the first one has already finished).
  const answeredEarly = new WeakSet<Duplex>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Taken now: node detaches the socket from the request once the answer has finished.
    const socket = req.socket;
    res.once('finish', () => {
      if (req.complete) return;
      answeredEarly.add(socket);
      req.once('end', () => answeredEarly.delete(socket));
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // _httpMessage is the answer in progress on this socket, as node's default handler reads it.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (err.code === 'ECONNRESET' || !socket.writable || answering || answeredEarly.has(socket)) {
      socket.destroy();
      return;
    }
    const name = CLIENT_ERRORS[err.code ?? ''] ?? 'bad-request';
    const status = ERRORS[name].httpStatus;
    const body = JSON.stringify(errorBody(name, name === 'io-timeout' ? 'the request did not arrive within the io-timeout' : undefined));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `cache-control: no-store\r\n${RAW_API_SECURITY_HEADERS}connection: close\r\n\r\n${body}`,
    );
    closeAfterAnswer(socket, ioTimeoutMs);
  });
}

/** Runs the route's handler for `req` (its body read first, bounded) and streams the answer. */
export function serveRoute(req: IncomingMessage, res: ServerResponse, daemon: DaemonFacade, match: Extract<RouteMatch, { kind: 'found' }>): void {
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const maxBytes = match.route.maxBodyBytes ?? MAX_BODY_BYTES;
  readBody(req, maxBytes)
    .then(async (body) => {
      if (body.kind === 'gone' || answeredAsFailed(req.socket)) {
        res.destroy();
        return;
      }
      if (body.kind === 'too-large') sendError(res, 'body-too-large', `over ${maxBytes} bytes`);
      else await send(res, await dispatch(match.route, webRequest(req, body.bytes, gone.signal), daemon, match.params));
    })
    .catch((err: unknown) => sendError(res, 'internal', err instanceof Error ? err.message : String(err)));
}

export function createHttpServer(daemon: DaemonFacade, bindHost: string, ioTimeoutMs = 5_000): Server {
  const server = createServer(httpServerOptions(ioTimeoutMs), (req, res) => {
    // A request parsed from bytes sent after a failure answer: the client was told it failed.
    if (answeredAsFailed(req.socket)) {
      res.destroy();
      return;
    }
    setApiSecurityHeaders(res);
    const path = requestPath(req);
    const refusal = refuseHost(bindHost, req.headers.host);
    if (refusal !== null) {
      sendError(res, 'forbidden', refusal);
      return;
    }
    // An operator who opens the dashboard on a console-less node learns why it is not there.
    if (CONSOLE_PAGES.has(path)) {
      sendError(res, 'not-found', consoleOffDetail(path));
      return;
    }
    const match = routeOrRefuse(res, path);
    if (match !== null) serveRoute(req, res, daemon, match);
  });
  answerClientErrors(server, ioTimeoutMs);
  return server;
}

/** The request's path, without its query string. */
export function requestPath(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] ?? '/';
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
