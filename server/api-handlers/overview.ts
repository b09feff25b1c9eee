// The node-wide reads of the console: the cluster, the overview numbers and the audit log.
import type { AuditPage } from '../../lib/ops-api/audit-filter.ts';
import { auditFilterOf, auditQuerySchema } from '../../lib/ops-api/audit-query.ts';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { readQuery, refusalResponse } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

export function getCluster(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? jsonResponse(200, daemon.cluster());
}

export function getStats(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? jsonResponse(200, daemon.stats());
}

/**
 * One page of the audit (lib/ops-api/audit-query.ts says what a query may ask): back in time
 * from `before`, or what arrived after `after`; newest last either way.
 */
export function getAudit(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, auditQuerySchema);
  if (!query.ok) return refusalResponse(query);
  const q = query.value;
  const filter = auditFilterOf(q);
  if (q.after !== undefined) {
    const got = daemon.audit.since(filter, q.after, q.limit);
    const body: AuditPage = { entries: got.entries, older: null, latest: got.latest, more: got.more };
    return jsonResponse(200, body);
  }
  // `latest` with the page: the console asks `after=latest` for what arrives next, so nothing
  // kept after this answer is missed, whatever its time.
  const latest = daemon.audit.latest;
  const got = daemon.audit.page(filter, q.before ?? null, q.limit);
  const body: AuditPage = { entries: got.entries, older: got.older, latest, more: false };
  return jsonResponse(200, body);
}
