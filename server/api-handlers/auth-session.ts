// /api/v1/auth/session: the dashboard trades a token for an HttpOnly session cookie, so the
// token never sits in the page's JavaScript. GET tells the page what the caller may do.
import { z } from 'zod';
import type { AuthView } from '../../lib/ops-api/api-types.ts';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { SESSION_COOKIE } from '../../lib/ops-api/daemon-facade.ts';
import { clientAddress } from './client-address.ts';
import { readJsonBody, refusalResponse } from './request-input.ts';
import { errorResponse, jsonResponse, originVerdict, principalName } from './route-kit.ts';

const signInBody = z.object({ token: z.string().min(1).max(1024) });

/**
 * HttpOnly keeps the cookie from scripts; SameSite=Strict keeps it off cross-site requests
 * (the Origin check on mutations is the second lock). Secure only over https: the console
 * is plain http on loopback by default, where a Secure cookie would never come back.
 */
function sessionCookie(req: Request, value: string, maxAgeSeconds: number): string {
  const secure = new URL(req.url).protocol === 'https:' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure}`;
}

/** A sign-in or sign-out posted by another site's page is refused outright (login CSRF). */
function refuseForeign(req: Request): Response | null {
  return originVerdict(req) === 'foreign' ? errorResponse('forbidden', 'cross-site request refused') : null;
}

/** Always open: the page asks this first to learn whether it must show the sign-in form. */
export function getSession(req: Request, daemon: DaemonFacade): Response {
  const who = daemon.security.identify(req.headers.get('authorization'), req.headers.get('cookie'));
  const view: AuthView = { role: who.kind === 'anonymous' ? null : who.role, readsOpen: daemon.security.readsOpen };
  return jsonResponse(200, view);
}

export async function signIn(req: Request, daemon: DaemonFacade): Promise<Response> {
  const foreign = refuseForeign(req);
  if (foreign !== null) return foreign;
  // Counted before the body is read or the token checked: a refused attempt costs nothing more.
  const client = clientAddress(req);
  const retryAfter = daemon.security.admitSignIn(client);
  if (retryAfter !== null) {
    if (daemon.security.noteFailedSignIn()) {
      daemon.audit.record({ who: 'anonymous', action: 'sign-in', target: 'session', result: 'too-many-sign-ins', detail: `from ${client}` });
    }
    return errorResponse('too-many-sign-ins', `try again in ${retryAfter} s`, { 'retry-after': String(retryAfter) });
  }
  const body = await readJsonBody(req, signInBody);
  if (!body.ok) return refusalResponse(body);
  const session = daemon.security.signIn(body.value.token);
  if (session === null) {
    if (daemon.security.noteFailedSignIn()) {
      daemon.audit.record({ who: 'anonymous', action: 'sign-in', target: 'session', result: 'unauthorized', detail: 'wrong token' });
    }
    return errorResponse('unauthorized', 'wrong token');
  }
  if (daemon.security.auditSignIn(session.role)) {
    daemon.audit.record({ who: `session:${session.publicId}`, action: 'sign-in', target: 'session', result: 'ok', detail: `role ${session.role}` });
  }
  const view: AuthView = { role: session.role, readsOpen: daemon.security.readsOpen };
  return jsonResponse(200, view, { 'set-cookie': sessionCookie(req, session.cookieValue, session.maxAgeSeconds) });
}

/** Ends the caller's session (if any) and clears the cookie either way. */
export function signOut(req: Request, daemon: DaemonFacade): Response {
  const foreign = refuseForeign(req);
  if (foreign !== null) return foreign;
  const cookie = req.headers.get('cookie');
  // Only the cookie counts here: a bearer caller has no session to end.
  const who = daemon.security.identify(null, cookie);
  if (who.kind === 'session') {
    daemon.security.signOut(cookie);
    daemon.audit.record({ who: principalName(who), action: 'sign-out', target: 'session', result: 'ok', detail: null });
  }
  const view: AuthView = { role: null, readsOpen: daemon.security.readsOpen };
  return jsonResponse(200, view, { 'set-cookie': sessionCookie(req, '', 0) });
}
