// Probes for orchestrators: /readyz says whether to send traffic here; /metrics is the
// Prometheus scrape. (/healthz, "is the process alive", lives in app/healthz/route.ts.)
import type { DaemonFacade } from '../daemon-facade.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

/** Ready only while serving: starting has no listeners yet, draining is turning clients away. Always open, like /healthz. */
export function getReadyz(_req: Request, daemon: DaemonFacade): Response {
  const state = daemon.state();
  const ready = state === 'serving';
  return jsonResponse(ready ? 200 : 503, { ready, state, role: daemon.role() });
}

/** Metrics show lock names' traffic and client counts: they are a read like any other. */
export async function getMetrics(req: Request, daemon: DaemonFacade): Promise<Response> {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const { contentType, body } = await daemon.metrics();
  return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
