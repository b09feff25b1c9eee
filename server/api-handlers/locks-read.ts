// GET /api/v1/locks (one page of lock summaries) and GET /api/v1/locks/{name} (one lock with
// its whole queue). Reads only: nothing here changes the engine.
import { z } from 'zod';
import type { DaemonFacade } from '../daemon/daemon-facade.ts';
import { checkLockName, readQuery, refusalResponse } from './request-input.ts';
import { errorResponse, jsonResponse, refuseRead } from './route-kit.ts';

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

const locksQuery = z.object({
  prefix: z.string().default(''),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
  // An empty cursor is the first page, as if none were given.
  cursor: z
    .string()
    .optional()
    .transform((c) => (c === undefined || c === '' ? null : c)),
});

export function listLocks(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, locksQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, daemon.locksPage(query.value));
}

export function getLock(req: Request, daemon: DaemonFacade, params: { name: string }): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const name = checkLockName(params.name);
  if (!name.ok) return refusalResponse(name);
  const lock = daemon.lockDetail(name.value);
  // The engine forgets a lock as soon as nobody holds or waits for it: there is nothing to show.
  if (lock === undefined) return errorResponse('not-found', `nobody holds or waits for ${name.value}`);
  return jsonResponse(200, lock);
}
