// The bulk release by client (issue 13, the stuck client): GET /api/v1/clients/held?identity=
// (or ?address=) lists what one client holds, POST /api/v1/clients/force-release releases the
// listed grants, each still guarded by its token. The client is matched exactly, by the
// identity it gave (keyed `I`, session `CLIENT`) or by its address, as the request says: never
// one for the other (issue 26). See server/admin-ops/client-release.ts.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { type ClientMatch, MAX_RELEASE_TOKENS, clientMatchText, clientMatchTextSchema, lockNameSchema } from '../../lib/ops-api/admin-request.ts';
import { type ActionOutcome, adminAction, adminOutcome } from './admin-action.ts';
import { readJsonBody, readQuery, refusalResponse, tokenSchema } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

/** Up to 10,000 tokens of about 22 bytes of JSON each: this route's body may be this big (others: 16 KiB). */
export const MAX_RELEASE_BODY_BYTES = 512 * 1024;

/**
 * The client a request names: exactly one of `identity` and `address`. `client`, which matched
 * either before issue 26, is refused with a message that says what to send instead.
 */
const clientFields = {
  identity: clientMatchTextSchema.optional(),
  address: clientMatchTextSchema.optional(),
  client: z
    .unknown()
    .optional()
    .refine((v) => v === undefined, 'no longer taken (it matched an identity or an address alike): name the client by `identity` or by `address`'),
};

function toMatch(v: { identity?: ClientMatch['value'] | undefined; address?: ClientMatch['value'] | undefined }, ctx: z.RefinementCtx): ClientMatch {
  if (v.identity !== undefined && v.address === undefined) return { by: 'identity', value: v.identity };
  if (v.address !== undefined && v.identity === undefined) return { by: 'address', value: v.address };
  ctx.addIssue({ code: 'custom', message: 'name the client by exactly one of `identity` (the name it gave) and `address`' });
  return z.NEVER;
}

/** Entries per page of GET /api/v1/clients/held unless `limit` says otherwise, and at most. */
export const DEFAULT_HELD_PAGE = 100;
export const MAX_HELD_PAGE = 1000;

/** The paging fields of GET /api/v1/clients/held (see client-held-page.ts): a page size, and the previous page's nextCursor. */
const heldPaging = {
  limit: z.coerce.number().int().min(1).max(MAX_HELD_PAGE).default(DEFAULT_HELD_PAGE),
  // A lock name, as nextCursor gave it; empty: the first page.
  after: z
    .string()
    .optional()
    .transform((a) => (a === undefined || a === '' ? null : a))
    .pipe(z.union([z.null(), lockNameSchema])),
};

/** The query of clients/held, and of clients/waiting (lock-views-read.ts): a client, a page size and a cursor. */
export const heldQuery = z
  .strictObject({ ...clientFields, ...heldPaging })
  .transform((v, ctx) => ({ match: toMatch(v, ctx), page: { limit: v.limit, after: v.after } }));

// Strict, like force-release's: a misspelt field must not be dropped.
const releaseBody = z
  .strictObject({ ...clientFields, tokens: z.array(tokenSchema).min(1).max(MAX_RELEASE_TOKENS) })
  .transform((v, ctx) => ({ client: toMatch(v, ctx), tokens: v.tokens }));

export async function getClientHeld(req: Request, daemon: DaemonFacade): Promise<Response> {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, heldQuery);
  if (!query.ok) return refusalResponse(query);
  return jsonResponse(200, await daemon.clientHeld(query.value.match, query.value.page));
}

export function releaseClient(req: Request, daemon: DaemonFacade): Promise<Response> {
  let target = 'client';
  return adminAction(
    req,
    daemon,
    'release-client',
    () => target,
    async (who): Promise<ActionOutcome> => {
      const body = await readJsonBody(req, releaseBody, MAX_RELEASE_BODY_BYTES);
      if (!body.ok) return body;
      target = clientMatchText(body.value.client);
      return adminOutcome(await daemon.admin.run({ op: 'release-client', client: body.value.client, tokens: body.value.tokens }, who));
    },
  );
}
