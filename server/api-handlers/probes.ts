// Probes for orchestrators: /healthz says the process is alive (and which process: its
// instance id), /readyz whether to send traffic here; /metrics is the Prometheus scrape. The
// console's route files and the console-less probes server (server/http/http-server.ts) both serve
// these same handlers.
import { z } from 'zod';
import { corsOriginFor, peerConsoleOrigins } from '../../lib/ops-api/console-origins.ts';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { readQuery, refusalResponse } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

/**
 * Alive, and which process: the page shows the same instance id. Always open and always 200,
 * draining included. `grants` says whether this node can grant: 'ok', or the error name of why
 * not ('tokens-exhausted', 'storage-unavailable'); `audit` whether the audit file takes what is
 * recorded ('ok', or 'unwritable': entries wait in memory, retried every second). Either one not
 * 'ok' makes `status` 'degraded': alive, serving what it can.
 */
export function getHealthz(_req: Request, daemon: DaemonFacade): Response {
  const state = daemon.state();
  const { refusal: refused, tokenHighWater } = daemon.grants();
  const audit = daemon.audit.health();
  return jsonResponse(200, {
    status: state === 'draining' ? 'draining' : refused !== null || audit.file !== 'ok' ? 'degraded' : 'ok',
    state,
    instanceId: daemon.instanceId,
    pid: process.pid,
    tokenHighWater: tokenHighWater.toString(),
    grants: refused ?? 'ok',
    role: daemon.role(),
    phase: daemon.cluster().phase,
    audit: audit.file,
    // How many wait, not why: the error names paths of the data dir, and this probe is open to anyone (stderr says why).
    ...(audit.file === 'ok' ? {} : { auditPending: audit.pending }),
  });
}

/** `?role=active` asks "is this the node to send clients to" (for load balancers); `standby` the opposite. */
const readyQuery = z.object({ role: z.enum(['active', 'standby']).optional() });

/**
 * Ready when the node can do its job: serving (starting has no listeners yet, draining is
 * turning clients away) and settled in a role (active, or a standby that has synced; not
 * discovering, syncing, promoting or handing off), and able to grant (see /healthz `grants`).
 * With `?role=` also in that role. A node holding only part of a table (a join cut short) adds `reason`.
 * Always open, like /healthz.
 */
export function getReadyz(req: Request, daemon: DaemonFacade): Response {
  const state = daemon.state();
  const role = daemon.role();
  const { phase, partialTable, coordination } = daemon.cluster();
  const query = readQuery(req, readyQuery);
  if (!query.ok) return refusalResponse(query);
  const wanted = query.value.role;
  // A node that can grant nothing (u64 used up, storage failing) is no place to send clients.
  const refused = daemon.grants().refusal;
  // The etcd mode: an active whose etcd role lease is not confirmed grants nothing (docs/cluster.md, "Two modes").
  const blocked = coordination?.blocked ?? null;
  const ready =
    state === 'serving' &&
    refused === null &&
    blocked === null &&
    (phase === 'active' || phase === 'standby') &&
    (wanted === undefined || (wanted === role && phase === wanted));
  // A node that holds part of a table and will not serve it says why (docs/cluster.md, "A join cut short").
  const held = blocked !== null ? { reason: blocked } : partialTable === undefined || partialTable === null ? {} : { reason: partialTable.reason };
  return jsonResponse(ready ? 200 : 503, { ready, state, role, phase, grants: refused ?? 'ok', ...held }, peerCors(req, daemon));
}

/**
 * A peer's console page asks this node's /readyz?role=active when its own node is gone (to
 * find the new active): the cluster's own consoles, and only they, may read the answer. No
 * credentials are allowed: the probe is open anyway, and nothing else answers CORS.
 */
function peerCors(req: Request, daemon: DaemonFacade): Record<string, string> {
  const origin = req.headers.get('origin');
  if (origin === null) return {};
  const allowed = corsOriginFor(origin, peerConsoleOrigins(daemon.cluster().nodes));
  return allowed === null ? { vary: 'origin' } : { 'access-control-allow-origin': allowed, vary: 'origin' };
}

/** Metrics show lock names' traffic and client counts: they are a read like any other. */
export async function getMetrics(req: Request, daemon: DaemonFacade): Promise<Response> {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const { contentType, body } = await daemon.metrics();
  return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
