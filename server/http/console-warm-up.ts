// Loads the console's page and route modules once at start-up, before the node serves locks or
// joins its cluster. Next loads each route's compiled module, and the first render of the page
// warms React and Next's caches, on the first request that needs it; in this process that work
// runs on the lock daemon's event loop: measured here, the first page view stalled a keyed
// acquire/release pair for about 0.5 s and the first API call for about 0.2 s (a standby whose
// loop stalls past the peer timeout drops out of the promotion it was next for). Warmed here,
// while /readyz still says "starting", later first views cost what every view costs.
//
// Only reads: GETs whose answers have no side effect (no audit line, no sign-in), bounded in
// time; a request that fails changes nothing but the warm-up itself.
import type { AddressInfo } from 'node:net';

/** What the dashboard and operators reach first; each path loads one route module. */
export const WARM_UP_PATHS: readonly string[] = [
  '/',
  '/api/v1/stats',
  '/api/v1/locks?limit=1',
  '/api/v1/locks/warm-up',
  '/api/v1/cluster',
  '/api/v1/audit?limit=1',
  '/api/v1/auth/session',
  '/api/v1/events',
  '/healthz',
  '/readyz',
  '/metrics',
];

const REQUEST_TIMEOUT_MS = 5_000;

export interface WarmUpResult {
  path: string;
  /** The HTTP status, or the error's message when none came. */
  outcome: number | string;
  ms: number;
}

/** Requests every path once, one after the other (in parallel they would stall the loop as long, in one go). */
export async function warmUpConsole(address: AddressInfo, paths: readonly string[] = WARM_UP_PATHS): Promise<WarmUpResult[]> {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // An unspecified bind address is reached on loopback.
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
  const results: WarmUpResult[] = [];
  for (const path of paths) {
    const startedAt = performance.now();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), REQUEST_TIMEOUT_MS);
    try {
      const reply = await fetch(`http://${target}:${address.port}${path}`, { signal: abort.signal });
      // The event stream never ends: its headers mean its module ran; the body is not read.
      if (reply.headers.get('content-type')?.startsWith('text/event-stream') === true) abort.abort();
      else await reply.arrayBuffer();
      results.push({ path, outcome: reply.status, ms: performance.now() - startedAt });
    } catch (err) {
      results.push({ path, outcome: err instanceof Error ? err.message : String(err), ms: performance.now() - startedAt });
    } finally {
      clearTimeout(timer);
    }
  }
  return results;
}
