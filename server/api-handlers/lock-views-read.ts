// The operator's finding views (issue 30): GET /api/v1/contention (the most contended locks now
// and over 1 h or 24 h), GET /api/v1/clients/waiting (what one client waits for, paged like
// clients/held) and GET /api/v1/waiters/search (the locks whose waiters match a search). Reads
// only, with the read token when one is set.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { CONTENTION_RANGES } from '../../lib/ops-api/lock-views-types.ts';
import { heldQuery } from './client-actions.ts';
import { readQuery, refusalResponse } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

export const DEFAULT_CONTENTION_LIMIT = 10;
export const MAX_CONTENTION_LIMIT = 50;
export const DEFAULT_SEARCH_LIMIT = 1_000;
export const MAX_SEARCH_LIMIT = 10_000;
/** The dashboard's search box takes 200 characters. */
export const MAX_SEARCH_TEXT = 200;

// Strict, like the other paged reads: a misspelt `rnage` must not silently give the default.
const contentionQuery = z.strictObject({
  range: z.enum(CONTENTION_RANGES).default('1h'),
  limit: z.coerce.number().int().min(1).max(MAX_CONTENTION_LIMIT).default(DEFAULT_CONTENTION_LIMIT),
});

const searchQuery = z.strictObject({
  q: z.string().max(MAX_SEARCH_TEXT),
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
});

export function getContention(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, contentionQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, daemon.contention(query.value.range, query.value.limit));
}

export async function getClientWaiting(req: Request, daemon: DaemonFacade): Promise<Response> {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, heldQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, await daemon.clientWaiting(query.value.match, query.value.page));
}

export function getWaiterSearch(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, searchQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, daemon.searchWaiters(query.value.q, query.value.limit));
}
