// The admin actions on one lock: force-release its holder, kick a waiter out of its queue.
// This is the HTTP edge: the path and body are parsed here, once, into the typed AdminOp
// (lib/ops-api/admin-request.ts) that goes inward unchanged. The op runs where the
// cluster says (this node when active, else forwarded to the active node): see
// server/admin-ops/admin-ops.ts for what it does.
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { type ActionOutcome, adminAction, adminOutcome } from './admin-action.ts';
import { checkClaimId, checkLockName, readJsonBody, tokenSchema } from './request-input.ts';

/**
 * No body, `{}`, or `{token}`: with a token only that grant is released (no race with a handover).
 * Strict: a misspelt key ("Token", "fencingToken") must not be dropped, or the caller that named
 * a holder would free whoever holds the lock now.
 */
const forceReleaseBody = z.strictObject({ token: tokenSchema.optional() }).optional();

export function forceRelease(req: Request, daemon: DaemonFacade, params: { name: string }): Promise<Response> {
  return adminAction(req, daemon, 'force-release', params.name, async (who): Promise<ActionOutcome> => {
    const name = checkLockName(params.name);
    if (!name.ok) return name;
    // The same mistake in the query string: the token belongs in the body.
    if (new URL(req.url).searchParams.has('token'))
      return { ok: false, error: 'invalid-input', detail: 'token: give it in the JSON body, not the query string' };
    const body = await readJsonBody(req, forceReleaseBody);
    if (!body.ok) return body;
    return adminOutcome(await daemon.admin.run({ op: 'force-release', lock: name.value, token: body.value?.token ?? null }, who));
  });
}

export function kickWaiter(req: Request, daemon: DaemonFacade, params: { name: string; id: string }): Promise<Response> {
  return adminAction(req, daemon, 'kick', params.name, async (who): Promise<ActionOutcome> => {
    const name = checkLockName(params.name);
    if (!name.ok) return name;
    const id = checkClaimId(params.id);
    if (!id.ok) return id;
    return adminOutcome(await daemon.admin.run({ op: 'kick', lock: name.value, claimId: id.value }, who));
  });
}
