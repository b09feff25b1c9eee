// GET /api/v1/stats/history?range=5m|1h|24h (the charts' longer ranges) and
// GET /api/v1/locks/{name}/history (one lock's last ended grants). Reads only.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { checkLockName, readQuery, refusalResponse } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

// Strict: a misspelt `rnage` must not silently mean 5 minutes.
const historyQuery = z.object({ range: z.enum(['5m', '1h', '24h']).default('5m') }).strict();

export function getStatsHistory(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, historyQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, daemon.statsHistory(query.value.range));
}

/** A lock nobody holds any more keeps its history here (unlike GET /api/v1/locks/{name}, which is 404 then). */
export function getLockHistory(req: Request, daemon: DaemonFacade, params: { name: string }): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const name = checkLockName(params.name);
  if (!name.ok) return refusalResponse(name);
  return jsonResponse(200, daemon.lockHistory(name.value));
}
