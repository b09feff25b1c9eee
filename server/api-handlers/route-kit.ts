// Glue between Next route handlers and the daemon: every handler reaches the daemon through
// the facade on globalThis (route code is bundled with its own module copies).
import { ERRORS, type ErrorName, errorBody } from '../../lib/errors.ts';
import { type DaemonFacade, getDaemonFacade, type Principal } from '../../lib/ops-api/daemon-facade.ts';

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

export function errorResponse(name: ErrorName, detail?: string, headers: Record<string, string> = {}): Response {
  return jsonResponse(ERRORS[name].httpStatus, errorBody(name, detail), headers);
}

type Handler<P> = (req: Request, daemon: DaemonFacade, params: P) => Promise<Response> | Response;

/**
 * Wraps a handler for a Next route file: finds the daemon, awaits the route params, and turns
 * an exception (a client that aborts its upload, a bug) into the same JSON error shape as
 * every other answer instead of Next's HTML 500.
 */
export function withDaemon<P = Record<string, never>>(handler: Handler<P>) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    const daemon = getDaemonFacade();
    if (daemon === undefined) return errorResponse('server-going-away', 'no daemon in this process');
    try {
      return await handler(req, daemon, await ctx.params);
    } catch (err) {
      return errorResponse('internal', err instanceof Error ? err.message : String(err));
    }
  };
}

/**
 * Reads are open when the daemon says so (bound to loopback, no --read-token); otherwise any
 * signed-in session or valid bearer token (read or admin) may read. Returns the refusal, or null.
 */
export function refuseRead(req: Request, daemon: DaemonFacade): Response | null {
  if (daemon.security.readsOpen) return null;
  const who = daemon.security.identify(req.headers.get('authorization'), req.headers.get('cookie'));
  return who.kind === 'anonymous' ? errorResponse('unauthorized', 'reads on this node need a token (Authorization: Bearer, or sign in)') : null;
}

/** How an audit entry names the caller: "bearer:admin", "bearer:read" or "session:<public id>". */
export function principalName(who: Principal): string {
  return who.kind === 'anonymous' ? 'anonymous' : `${who.kind}:${who.name}`;
}

/**
 * Where the request says it comes from, judged against its own Host header and the scheme it
 * was served on: an origin is scheme, host and port, and a page on `https://` (or `ftp://`) at
 * this host and port is another origin than the console served over `http://`. Behind Next,
 * `req.url` is rebuilt from the server's own hostname, so the Host header (what the browser
 * addressed) is the reliable side for the host, and the URL's scheme is the served one (`http:`
 * from both servers; `https:` only when a proxy in front that terminates TLS says so, as for
 * the Secure cookie). A missing Host falls back to the URL (direct handler calls).
 */
export function originVerdict(req: Request): 'absent' | 'same' | 'foreign' {
  const origin = req.headers.get('origin');
  if (origin === null) return 'absent';
  try {
    const from = new URL(origin);
    const served = new URL(req.url);
    if (from.protocol !== served.protocol) return 'foreign';
    const host = req.headers.get('host') ?? served.host;
    // Parsing the Host with the Origin's scheme normalizes case and default ports alike.
    return from.host === new URL(`${from.protocol}//${host}`).host ? 'same' : 'foreign';
  } catch {
    return 'foreign'; // "null" (sandboxed frames, file: pages) and anything unparsable
  }
}

/** `who` is set when the caller was identified but may not do this (the refusal is audited). */
export type AdminGate = { allowed: true; who: string } | { allowed: false; response: Response; who: string | null; reason: string };

function refuse(name: 'unauthorized' | 'forbidden', reason: string, who: string | null): AdminGate {
  return { allowed: false, response: errorResponse(name, reason), who, reason };
}

/**
 * Mutations need the admin role. A browser session must also prove the request comes from
 * our own pages (Origin equal to Host): SameSite does not separate ports, so another app on
 * the same host would otherwise ride on the cookie; an Authorization header is never attached
 * by the browser on its own, so bearer callers need no Origin.
 */
export function checkAdmin(req: Request, daemon: DaemonFacade): AdminGate {
  const who = daemon.security.identify(req.headers.get('authorization'), req.headers.get('cookie'));
  if (who.kind === 'anonymous') return refuse('unauthorized', 'this action needs the admin token (Authorization: Bearer, or sign in)', null);
  if (who.role !== 'admin') return refuse('forbidden', 'the read token cannot change anything', principalName(who));
  if (who.kind === 'session' && originVerdict(req) !== 'same') return refuse('forbidden', 'cross-site request refused', principalName(who));
  return { allowed: true, who: principalName(who) };
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpMethod = (typeof METHODS)[number];
type PlainHandler = (req: Request) => Response;

/**
 * Handlers for the methods a route does not implement, to export from its route file next to
 * its own: `export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST')`.
 * Without them Next answers an empty 405 with no Allow header, and its automatic OPTIONS would
 * list these refusals as allowed. HEAD follows GET (Next runs GET for it) when GET is allowed.
 * The result type leaves out the allowed methods, so a route cannot export a refusal by mistake.
 */
export function otherMethods<A extends HttpMethod>(...allowed: A[]): Record<Exclude<HttpMethod, A | ('GET' extends A ? 'HEAD' : never)>, PlainHandler> {
  const allow = new Set<HttpMethod>([...allowed, 'OPTIONS']);
  if (allow.has('GET')) allow.add('HEAD');
  const header = METHODS.filter((m) => allow.has(m)).join(', ');
  const notAllowed: PlainHandler = (req) =>
    errorResponse('method-not-allowed', `${req.method} ${new URL(req.url).pathname}; allowed: ${header}`, { allow: header });
  const options: PlainHandler = () => new Response(null, { status: 204, headers: { allow: header } });
  const out = {} as Record<HttpMethod, PlainHandler>;
  for (const m of METHODS) out[m] = m === 'OPTIONS' ? options : notAllowed;
  return out;
}
