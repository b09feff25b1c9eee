// One path for every mutation of the ops API: check the caller, run the action, write the
// audit entry, answer. Actions return an outcome instead of a Response so that no exit path
// (a bad body, a stale token, success) can skip its audit entry.
import type { ErrorName } from '../../lib/errors.ts';
import type { AuditEntry } from '../../lib/ops/api-types.ts';
import type { DaemonFacade } from '../daemon-facade.ts';
import { checkAdmin, errorResponse, jsonResponse } from './route-kit.ts';

export type ActionOutcome =
  | { ok: true; body: unknown; detail: string | null }
  /** `response` answers instead of the one built from `error` (a 400 or 422 from input checks). */
  | { ok: false; error: ErrorName; detail: string; response?: Response };

/** Audit targets come from URLs; a refused name may be any length, the log should not be. */
const MAX_TARGET = 256;

export async function adminAction(
  req: Request,
  daemon: DaemonFacade,
  action: AuditEntry['action'],
  target: string,
  act: () => ActionOutcome | Promise<ActionOutcome>,
): Promise<Response> {
  const gate = checkAdmin(req, daemon);
  if (!gate.allowed) return gate.response;
  const record = (result: string, detail: string | null) =>
    daemon.audit.record({ who: gate.who, action, target: target.slice(0, MAX_TARGET), result, detail });
  let outcome: ActionOutcome;
  try {
    outcome = await act();
  } catch (err) {
    record('internal', err instanceof Error ? err.message : String(err));
    throw err;
  }
  record(outcome.ok ? 'ok' : outcome.error, outcome.detail);
  if (outcome.ok) return jsonResponse(200, outcome.body);
  return outcome.response ?? errorResponse(outcome.error, outcome.detail);
}

/** Turns a failed input check into an outcome, keeping its response (and its status). */
export async function refusedInput(response: Response): Promise<ActionOutcome> {
  const body = (await response.clone().json()) as { error: { code: ErrorName; message: string } };
  return { ok: false, error: body.error.code, detail: body.error.message, response };
}
