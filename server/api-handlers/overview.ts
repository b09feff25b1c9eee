// The node-wide reads of the console: the cluster, the overview numbers and the audit log.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { readQuery, refusalResponse } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

export function getCluster(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? jsonResponse(200, daemon.cluster());
}

export function getStats(req: Request, daemon: DaemonFacade): Response {
  return refuseRead(req, daemon) ?? jsonResponse(200, daemon.stats());
}

export const DEFAULT_AUDIT_LIMIT = 200;
/** The audit log keeps this many entries in memory (AUDIT_MEMORY in server/audit/audit-log.ts). */
export const MAX_AUDIT_LIMIT = 1000;

const auditQuery = z.object({ limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIMIT).default(DEFAULT_AUDIT_LIMIT) });

/** Newest last, as the log keeps them. */
export function getAudit(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, auditQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, { entries: daemon.audit.recent(query.value.limit) });
}
