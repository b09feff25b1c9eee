// The admin actions on one lock: force-release its holder, kick a waiter out of its queue.
// Both act on the engine directly and then wake the daemon's timer, whose next deadline the
// action may have moved (a new holder's lease, a waiter's wait deadline gone).
import { z } from 'zod';
import type { DaemonFacade } from '../daemon-facade.ts';
import { holderView } from '../ops/lock-views.ts';
import { type ActionOutcome, adminAction } from './admin-action.ts';
import { checkClaimId, checkLockName, readJsonBody, tokenSchema } from './request-input.ts';

/**
 * No body, `{}`, or `{token}`: with a token only that grant is released (no race with a handover).
 * Strict: a misspelt key ("Token", "fencingToken") must not be dropped, or the caller that named
 * a holder would free whoever holds the lock now.
 */
const forceReleaseBody = z.strictObject({ token: tokenSchema.optional() }).optional();

export function forceRelease(req: Request, daemon: DaemonFacade, params: { name: string }): Promise<Response> {
  return adminAction(req, daemon, 'force-release', params.name, async (): Promise<ActionOutcome> => {
    const name = checkLockName(params.name);
    if (!name.ok) return name;
    // The same mistake in the query string: the token belongs in the body.
    if (new URL(req.url).searchParams.has('token')) return { ok: false, error: 'invalid-input', detail: 'token: give it in the JSON body, not the query string' };
    const body = await readJsonBody(req, forceReleaseBody);
    if (!body.ok) return body;
    const token = body.value?.token;
    const result = daemon.engine.forceRelease(name.value, token);
    if (!result.ok) {
      if (result.reason === 'not-held') return { ok: false, error: 'not-found', detail: `nobody holds ${name.value}` };
      return { ok: false, error: 'stale-token', detail: `token ${String(token)} does not hold ${name.value}; the holder's token is ${String(result.holderToken)}` };
    }
    daemon.wake();
    const next = daemon.engine.lock(name.value)?.holder ?? null;
    const { claim } = result;
    return {
      ok: true,
      body: {
        released: { name: name.value, token: result.token.toString(), protocol: claim.protocol, client: claim.client },
        nextHolder: next === null ? null : holderView(next, daemon.clock),
      },
      detail: `token ${result.token} held by ${claim.client} (${claim.protocol})${next === null ? '' : `; now token ${next.token}`}`,
    };
  });
}

export function kickWaiter(req: Request, daemon: DaemonFacade, params: { name: string; id: string }): Promise<Response> {
  return adminAction(req, daemon, 'kick', params.name, (): ActionOutcome => {
    const name = checkLockName(params.name);
    if (!name.ok) return name;
    const id = checkClaimId(params.id);
    if (!id.ok) return id;
    if (!daemon.engine.kick(name.value, id.value)) return { ok: false, error: 'not-found', detail: `no waiter ${id.value} in the queue of ${name.value}` };
    daemon.wake();
    return { ok: true, body: { kicked: { name: name.value, id: String(id.value) } }, detail: `waiter ${id.value}` };
  });
}
