// GET /api/v1/locks (one page of lock summaries) and GET /api/v1/locks/{name} (one lock with
// one page of its queue). Reads only: nothing here changes the engine.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
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

export async function listLocks(req: Request, daemon: DaemonFacade): Promise<Response> {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, locksQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, await daemon.locksPage(query.value));
}

/** Waiters per page of a lock's queue unless `limit` says otherwise, and at most. */
export const DEFAULT_QUEUE_PAGE = 100;
export const MAX_QUEUE_PAGE = 1000;

// Strict: a misspelt `afer` must not silently give the first page again.
const queueQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_QUEUE_PAGE).default(DEFAULT_QUEUE_PAGE),
  // A waiter's id (its claim id), as the previous page's nextCursor gave it; empty: the first page.
  after: z
    .string()
    .regex(/^([1-9][0-9]{0,15})?$/, 'expected a waiter id (a decimal claim id), as nextCursor gave it')
    .optional()
    .transform((a) => (a === undefined || a === '' ? null : Number(a)))
    .refine((a) => a === null || Number.isSafeInteger(a), 'expected a waiter id (a decimal claim id), as nextCursor gave it'),
});

export function getLock(req: Request, daemon: DaemonFacade, params: { name: string }): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const name = checkLockName(params.name);
  if (!name.ok) return refusalResponse(name);
  const query = readQuery(req, queueQuery);
  if (!query.ok) return refusalResponse(query);
  const lock = daemon.lockDetail(name.value, query.value);
  // The engine forgets a lock as soon as nobody holds or waits for it: there is nothing to show.
  if (lock === undefined) return errorResponse('not-found', `nobody holds or waits for ${name.value}`);
  if (lock === 'no-such-waiter') {
    return errorResponse('not-found', `after: waiter ${query.value.after} is no longer in the queue of ${name.value}; read it again from the first page`);
  }
  return jsonResponse(200, lock);
}
