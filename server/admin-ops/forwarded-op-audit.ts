// The audit entries the active node writes for an admin op a standby forwarded to it: one for
// the op, under the caller the standby named, with the op's target as the node that took the
// request names it (auditTarget), then one force-release entry per lock a bulk release by client
// freed. The node that took the request writes its own entry too (server/api-handlers/admin-action.ts).
import { auditTarget } from '../../lib/ops-api/admin-request.ts';
import { recordResultAudits } from '../../lib/ops-api/admin-result.ts';
import type { AdminOp, AdminResult, AuditFacade } from '../../lib/ops-api/daemon-facade.ts';

export function auditForwardedOp(audit: Pick<AuditFacade, 'record'>, who: string, op: AdminOp, result: AdminResult): void {
  audit.record({ who, action: op.op, target: auditTarget(op), result: result.ok ? 'ok' : result.error, detail: result.detail });
  recordResultAudits(audit, who, result);
}
