// Every route of the ops API and the probes, as a table: what the console-less HTTP server
// (server/http/http-server.ts, `--no-console`) serves. The console serves the same handlers from
// its route files under app/; api-routes.test.ts reads the app directory and fails when a route
// file has no entry here (or a different set of methods), so the two modes cannot drift.
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { getSession, signIn, signOut } from './auth-session.ts';
import { MAX_RELEASE_BODY_BYTES, getClientHeld, releaseClient } from './client-actions.ts';
import { eventsRoute } from './events-route.ts';
import { postHandoff } from './handoff.ts';
import { getLockHistory, getStatsHistory } from './history-read.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';
import { getLock, listLocks } from './locks-read.ts';
import { getClientWaiting, getContention, getWaiterSearch } from './lock-views-read.ts';
import { getAudit, getCluster, getStats } from './overview.ts';
import { getHealthz, getMetrics, getReadyz } from './probes.ts';
import { postRestore } from './restore.ts';
import { type HttpMethod, otherMethods } from './route-kit.ts';

export type RouteParams = Record<string, string>;
// Each handler names its own params; the table only promises the ones its pattern declares.
// biome-ignore lint/suspicious/noExplicitAny: each handler's params type differs; `unknown` or `never` would not accept them or not let the table call them.
type AnyHandler = (req: Request, daemon: DaemonFacade, params: any) => Response | Promise<Response>;

export interface ApiRoute {
  /** As the app directory spells it: `[name]` is a path parameter. */
  pattern: string;
  handlers: Partial<Record<'GET' | 'POST' | 'DELETE', AnyHandler>>;
  /** The route's body cap when it is not MAX_BODY_BYTES (request-input.ts); the handler applies the same one. */
  maxBodyBytes?: number;
  /**
   * Served by the daemon's own HTTP code in console mode too, never through Next: Next's
   * handling of a request (its router, request adapters, AsyncLocalStorage) took roughly
   * 0.5-0.7 ms, and a burst of 100 event streams joining at once held the loop for about
   * 100 ms in it, before the event hub saw any of them.
   */
  direct?: true;
}

export const API_ROUTES: readonly ApiRoute[] = [
  { pattern: '/healthz', handlers: { GET: getHealthz } },
  { pattern: '/readyz', handlers: { GET: getReadyz } },
  { pattern: '/metrics', handlers: { GET: getMetrics } },
  { pattern: '/api/v1/auth/session', handlers: { GET: getSession, POST: signIn, DELETE: signOut } },
  { pattern: '/api/v1/stats', handlers: { GET: getStats } },
  { pattern: '/api/v1/stats/history', handlers: { GET: getStatsHistory } },
  { pattern: '/api/v1/audit', handlers: { GET: getAudit } },
  { pattern: '/api/v1/events', handlers: { GET: eventsRoute }, direct: true },
  { pattern: '/api/v1/cluster', handlers: { GET: getCluster } },
  { pattern: '/api/v1/cluster/handoff', handlers: { POST: postHandoff } },
  { pattern: '/api/v1/cluster/restore', handlers: { POST: postRestore } },
  { pattern: '/api/v1/locks', handlers: { GET: listLocks } },
  { pattern: '/api/v1/locks/[name]', handlers: { GET: getLock } },
  { pattern: '/api/v1/locks/[name]/history', handlers: { GET: getLockHistory } },
  { pattern: '/api/v1/locks/[name]/force-release', handlers: { POST: forceRelease } },
  { pattern: '/api/v1/locks/[name]/waiters/[id]/kick', handlers: { POST: kickWaiter } },
  { pattern: '/api/v1/clients/held', handlers: { GET: getClientHeld } },
  { pattern: '/api/v1/clients/waiting', handlers: { GET: getClientWaiting } },
  { pattern: '/api/v1/contention', handlers: { GET: getContention } },
  { pattern: '/api/v1/waiters/search', handlers: { GET: getWaiterSearch } },
  { pattern: '/api/v1/clients/force-release', handlers: { POST: releaseClient }, maxBodyBytes: MAX_RELEASE_BODY_BYTES },
];

/**
 * The console's pages (each app/.../page.tsx; api-routes.test.ts checks the list against the app
 * directory). Without the console (`--no-console`) the HTTP port answers them with a JSON 404
 * that says the dashboard is off, rather than a bare "not found".
 */
export const CONSOLE_PAGES: ReadonlySet<string> = new Set(['/']);

/** The detail of that 404: what is off, and what this port does serve (the words of `baton serve --help`). */
export function consoleOffDetail(path: string): string {
  return `${path}: the dashboard is off on this node (started with --no-console); this port serves the probes (/healthz, /readyz), /metrics and the JSON ops API (/api/v1)`;
}

export type RouteMatch =
  | { kind: 'found'; route: ApiRoute; params: RouteParams }
  | { kind: 'not-found' }
  /** A parameter segment that does not URL-decode ("%zz"). */
  | { kind: 'bad-path' };

const PARAM = /^\[([a-z]+)\]$/;

/** First path segments of the table's routes: "api", "healthz", "readyz", "metrics". */
const ROOTS = new Set(API_ROUTES.map((r) => r.pattern.split('/')[1] ?? ''));

/**
 * Whether `path` is under the ops API or a probe (`/api`, `/api/...`, `/healthz`, ...): every
 * answer there is JSON (or the metrics text) in both modes, never one of Next's pages, so the
 * console's server answers a path there that no route serves itself, as the console-less one does.
 */
export function isApiPath(path: string): boolean {
  const end = path.indexOf('/', 1);
  return ROOTS.has(end < 0 ? path.slice(1) : path.slice(1, end));
}

/** Finds the route for a URL path (no query string); parameters come back URL-decoded, as Next gives them. */
export function matchRoute(path: string, routes: readonly ApiRoute[] = API_ROUTES): RouteMatch {
  const segments = path.split('/');
  for (const route of routes) {
    const parts = route.pattern.split('/');
    if (parts.length !== segments.length) continue;
    const params: RouteParams = {};
    let matched = true;
    for (let i = 0; i < parts.length && matched; i++) {
      const part = parts[i];
      const segment = segments[i];
      // Both have parts.length entries.
      if (part === undefined || segment === undefined) {
        matched = false;
        break;
      }
      const name = PARAM.exec(part)?.[1];
      if (name === undefined) {
        matched = part === segment;
      } else if (segment === '') {
        matched = false;
      } else {
        try {
          params[name] = decodeURIComponent(segment);
        } catch {
          return { kind: 'bad-path' };
        }
      }
    }
    if (matched) return { kind: 'found', route, params };
  }
  return { kind: 'not-found' };
}

/**
 * Answers `req` with the route's handler for its method; HEAD runs GET (the server leaves the
 * body out), and other methods get the same 405 or OPTIONS answer as the console's route files.
 */
export function dispatch(route: ApiRoute, req: Request, daemon: DaemonFacade, params: RouteParams): Response | Promise<Response> {
  const method = req.method.toUpperCase();
  const own = route.handlers[(method === 'HEAD' ? 'GET' : method) as 'GET' | 'POST' | 'DELETE'];
  if (own !== undefined) return own(req, daemon, params);
  const allowed = Object.keys(route.handlers) as HttpMethod[];
  const others = otherMethods(...allowed) as Partial<Record<string, (req: Request) => Response>>;
  const refusal = others[method] ?? others.PUT;
  return (refusal as (req: Request) => Response)(req);
}
