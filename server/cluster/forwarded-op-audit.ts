// The audit entries the active node writes for an admin op a standby forwarded to it: one for
// the op, under the caller the standby named, with the op's target as the node that took the
// request names it (auditTarget), then one force-release entry per lock a bulk release by client
// freed. The node that took the request writes its own entry too (server/api-handlers/admin-action.ts).
// Here for now, beside the cluster admin that serves the forwarded op; its home is beside the
// admin ops, once the console services have a folder of their own for them.
import type { AdminOp, AdminResult, AuditFacade } from '../daemon/daemon-facade.ts';
import { auditTarget } from '../console-services/admin-request.ts';
import { resultAudits } from '../console-services/client-release.ts';

export function auditForwardedOp(audit: Pick<AuditFacade, 'record'>, who: string, op: AdminOp, result: AdminResult): void {
  audit.record({ who, action: op.op, target: auditTarget(op), result: result.ok ? 'ok' : result.error, detail: result.detail });
  for (const a of resultAudits(result)) audit.record({ who, action: 'force-release', target: a.target, result: 'ok', detail: a.detail });
}
