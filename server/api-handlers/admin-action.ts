// One path for every mutation of the ops API: check the caller, run the action, write the
// audit entry, answer. Actions return an outcome instead of a Response so that no exit path
// (a bad body, a stale token, success) can skip its audit entry.
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { AdminAudit, AdminResult, DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { knownError, recordResultAudits } from '../../lib/ops-api/admin-result.ts';
import { type Refusal, refusalResponse } from './request-input.ts';
import { checkAdmin, jsonResponse } from './route-kit.ts';

export type ActionOutcome = { ok: true; body: unknown; detail: string | null; audits?: readonly AdminAudit[] } | Refusal;

/** Audit targets come from URLs; a refused name may be any length, the log should not be. */
const MAX_TARGET = 256;

export async function adminAction(
  req: Request,
  daemon: DaemonFacade,
  action: AuditEntry['action'],
  /** A function when the target is only known once the action has read its body. */
  target: string | (() => string),
  /** `who` names the caller: the active node audits a forwarded op under it too. */
  act: (who: string) => ActionOutcome | Promise<ActionOutcome>,
): Promise<Response> {
  const gate = checkAdmin(req, daemon);
  const record = (who: string, result: string, detail: string | null) =>
    daemon.audit.record({ who, action, target: (typeof target === 'string' ? target : target()).slice(0, MAX_TARGET), result, detail });
  if (!gate.allowed) {
    // Anonymous callers leave no trace (anyone can knock); a known caller refused does.
    if (gate.who !== null) record(gate.who, 'forbidden', gate.reason);
    return gate.response;
  }
  const who = gate.who;
  let outcome: ActionOutcome;
  try {
    outcome = await act(who);
  } catch (err) {
    record(who, 'internal', err instanceof Error ? err.message : String(err));
    throw err;
  }
  record(who, outcome.ok ? 'ok' : outcome.error, outcome.detail);
  // A bulk release by client: one force-release entry per lock it freed, after its summary.
  if (outcome.ok) recordResultAudits(daemon.audit, who, outcome);
  return outcome.ok ? jsonResponse(200, outcome.body) : refusalResponse(outcome);
}

/**
 * An admin op's result as the action's outcome. It may have crossed a peer link, so an error
 * name this build does not know becomes `internal` rather than a response without a status.
 */
export function adminOutcome(result: AdminResult): ActionOutcome {
  return result.ok ? result : { ok: false, error: knownError(result.error), detail: result.detail };
}
