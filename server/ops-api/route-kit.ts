// Glue between Next route handlers and the daemon: every handler reaches the daemon through
// the facade on globalThis (route code is bundled with its own module copies).
import { ERRORS, type ErrorName } from '../../lib/errors.ts';
import { type DaemonFacade, getDaemonFacade } from '../daemon-facade.ts';

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

export function errorResponse(name: ErrorName, detail?: string, headers: Record<string, string> = {}): Response {
  const spec = ERRORS[name];
  return jsonResponse(spec.httpStatus, { error: { code: name, message: detail ? `${spec.message}: ${detail}` : spec.message } }, headers);
}

type Handler<P> = (req: Request, daemon: DaemonFacade, params: P) => Promise<Response> | Response;

/** Wraps a handler for a Next route file: finds the daemon, awaits the route params. */
export function withDaemon<P = Record<string, never>>(handler: Handler<P>) {
  return async (req: Request, ctx: { params: Promise<P> }): Promise<Response> => {
    const daemon = getDaemonFacade();
    if (daemon === undefined) return errorResponse('server-going-away', 'no daemon in this process');
    return handler(req, daemon, await ctx.params);
  };
}
