// The operator console: a custom Next.js server (App Router, production build) on the
// daemon's HTTP port. Next is loaded only here, and only when the console is on, so the lock
// daemon itself (and tests that do not need the console) never pay for it.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERRORS, errorBody } from '../../lib/errors.ts';
import { peerConsoleOrigins } from '../../lib/ops-api/console-origins.ts';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { answerClientErrors, answeredAsFailed, httpServerOptions, requestPath, routeOrRefuse, serveRoute } from './http-server.ts';
import { refuseHost } from '../console-auth/host-guard.ts';
import { isApiPath } from '../api-handlers/api-routes.ts';
import { CLIENT_ADDRESS_HEADER } from '../api-handlers/client-address.ts';
import { consoleCsp, newNonce, setApiSecurityHeaders, setConsoleSecurityHeaders } from './security-headers.ts';

/** The package root: where app/, next.config.ts and the .next build live. */
export const CONSOLE_DIR = fileURLToPath(new URL('../..', import.meta.url));

export class ConsoleBuildMissingError extends Error {
  constructor(dir: string) {
    super(`no production build of the operator console in ${join(dir, '.next')}: run "npm run build" (npm start does it for you), or start with --no-console`);
  }
}

export interface ConsoleServer {
  readonly http: Server;
  /** Closes Next after the HTTP server has stopped taking requests. */
  closeNext(): Promise<void>;
}

/** next's factory, as its own types declare it (the default export of next/dist/server/next.js). */
type CreateNext = typeof import('next')['default'];

export interface ConsoleServerOptions {
  host: string;
  port: number;
  dev: boolean;
  ioTimeoutMs: number;
  /** For the API paths the console answers itself (see sameAsUrlPath). */
  daemon: DaemonFacade;
}

/** Whether a URL parser reads `path` as exactly this path (no dot segments, backslashes or bytes it would escape). */
function sameAsUrlPath(path: string): boolean {
  try {
    return new URL(path, 'http://127.0.0.1').pathname === path;
  } catch {
    return false;
  }
}

export async function createConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  if (!options.dev && !existsSync(join(CONSOLE_DIR, '.next', 'BUILD_ID'))) throw new ConsoleBuildMissingError(CONSOLE_DIR);
  // next is CommonJS (`module.exports = createServer`): Node hands that factory to the default
  // import, while TypeScript's nodenext view of next's types wraps it once more (`default.default`).
  // The default is typed as either shape, and `typeof` tells them apart at run time.
  const imported = await import('next');
  const outer: CreateNext | typeof imported.default = imported.default;
  const createNext: CreateNext = typeof outer === 'function' ? outer : outer.default;
  const app = createNext({ dev: options.dev, dir: CONSOLE_DIR, hostname: options.host, port: options.port, quiet: true });
  // stdout is the daemon's contract (the "baton serving ..." line first, for scripts and
  // tests); Next still logs a line or two while it prepares ("Running next.config.mjs took
  // ..."), so that chatter goes to stderr with the rest of the logs.
  const log = console.log;
  console.log = (...args: unknown[]) => console.error(...args);
  try {
    await app.prepare();
  } catch (err) {
    // A half-prepared Next (dev mode has file watchers) must not outlive the failed start.
    await app.close().catch(() => {});
    throw err;
  } finally {
    console.log = log;
  }
  const handle = app.getRequestHandler();
  // The cluster file does not change while the process runs: its peers' console origins are read once.
  let origins: readonly string[] | null = null;
  const peerOrigins = (): readonly string[] => {
    origins ??= peerConsoleOrigins(options.daemon.cluster().nodes);
    return origins;
  };
  const http = createServer(httpServerOptions(options.ioTimeoutMs), (req, res) => {
    // A request parsed from bytes sent after a 408/431/400 on this socket: the client was told
    // it failed, so it must not reach a route (a request already in Next when the answer went
    // gets no more body: the socket stopped reading).
    if (answeredAsFailed(req.socket)) {
      res.destroy();
      return;
    }
    const path = requestPath(req);
    const api = isApiPath(path);
    if (api) setApiSecurityHeaders(res);
    else setConsoleSecurityHeaders(req, res, consoleCsp(newNonce(), options.dev, peerOrigins()));
    const refusal = refuseHost(options.host, req.headers.host);
    if (refusal !== null) {
      res.writeHead(ERRORS.forbidden.httpStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify(errorBody('forbidden', refusal)));
      return;
    }
    // A path under /api/ (or a probe's) that no route serves, or whose name does not URL-decode,
    // gets the console-less server's JSON answer: Next would answer it with an HTML 404 page, a
    // trailing-slash redirect, or a text/plain 500 from its own URL decoding.
    if (api) {
      const match = routeOrRefuse(res, path);
      if (match === null) return;
      // Next reads the path as a URL (WHATWG): `%2e%2e` and `.` segments are resolved, `\` is a
      // `/`, and it redirects there. A path it would read differently from the table is served
      // here by the console-less server's own code, so it gets the same answer in both modes;
      // so is a route marked `direct` (the event stream: many may join at once, and Next's
      // per-request cost is paid on the lock path's loop).
      if (!sameAsUrlPath(path) || match.route.direct === true) {
        serveRoute(req, res, options.daemon, match);
        return;
      }
    }
    // Handlers see the socket's address in this header, never one the client wrote (client-address.ts).
    req.headers[CLIENT_ADDRESS_HEADER] = req.socket.remoteAddress ?? '?';
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody('internal', err instanceof Error ? err.message : String(err))));
      } else {
        res.destroy();
      }
    });
  });
  answerClientErrors(http, options.ioTimeoutMs);
  return { http, closeNext: () => app.close() };
}
