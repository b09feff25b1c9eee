// The bulk release by client (issue 13, the stuck client): GET /api/v1/clients/held?client=
// lists what one client holds, POST /api/v1/clients/force-release releases the listed grants,
// each still guarded by its token. The client is matched exactly, by the identity it gave
// (keyed `I`, session `CLIENT`) or its address. See server/console-services/client-release.ts.
import { z } from 'zod';
import type { DaemonFacade } from '../daemon/daemon-facade.ts';
import { MAX_RELEASE_TOKENS, clientMatchSchema, lockNameSchema } from '../console-services/admin-request.ts';
import { type ActionOutcome, adminAction, adminOutcome } from './admin-action.ts';
import { readJsonBody, readQuery, refusalResponse, tokenSchema } from './request-input.ts';
import { jsonResponse, refuseRead } from './route-kit.ts';

/** Up to 10,000 tokens of about 22 bytes of JSON each: this route's body may be this big (others: 16 KiB). */
export const MAX_RELEASE_BODY_BYTES = 512 * 1024;

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

const heldQuery = z.strictObject({ client: clientMatchSchema, ...heldPaging });

// Strict, like force-release's: a misspelt field must not be dropped.
const releaseBody = z.strictObject({
  client: clientMatchSchema,
  tokens: z.array(tokenSchema).min(1).max(MAX_RELEASE_TOKENS),
});

export function getClientHeld(req: Request, daemon: DaemonFacade): Response {
  const refused = refuseRead(req, daemon);
  if (refused !== null) return refused;
  const query = readQuery(req, heldQuery);
  if (!query.ok) return refusalResponse(query);
  const { client, ...page } = query.value;
  return jsonResponse(200, daemon.clientHeld(client, page));
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
      target = `client ${body.value.client}`;
      return adminOutcome(await daemon.admin.run({ op: 'release-client', client: body.value.client, tokens: body.value.tokens }, who));
    },
  );
}
