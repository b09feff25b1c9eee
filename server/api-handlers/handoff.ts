// POST /api/v1/cluster/handoff: asks the active node to hand the active role to a standby
// (a standby's API forwards the request to the active node).
import { z } from 'zod';
import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';
import { adminAction, adminOutcome } from './admin-action.ts';
import { auditTarget } from '../../lib/ops-api/admin-request.ts';
import { readJsonBody } from './request-input.ts';

/** No body or `{}` lets the cluster pick the standby (the highest priority alive). Strict: a misspelt "target" must not become "any standby". */
const handoffBody = z.strictObject({ target: z.string().min(1).max(256).optional() }).optional();

export function postHandoff(req: Request, daemon: DaemonFacade): Promise<Response> {
  let target: string | null = null;
  // The audit target is read after the action: the body is only parsed inside it.
  return adminAction(
    req,
    daemon,
    'handoff',
    () => auditTarget({ op: 'handoff', target }),
    async (who) => {
      const body = await readJsonBody(req, handoffBody);
      if (!body.ok) return body;
      target = body.value?.target ?? null;
      return adminOutcome(await daemon.admin.run({ op: 'handoff', target }, who));
    },
  );
}
