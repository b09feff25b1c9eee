// An audit entry's target as what it is: a lock name (force-release, kick) through LockName,
// which marks invisible and look-alike characters; a client identity or address (release-client),
// a node ("b", "any standby", "every yielded node") or a session as plain text, spaces and all.
import type { AuditAction } from '@/lib/ops-api/api-types.ts';
import { targetIsLock } from '@/lib/ops-api/audit-filter.ts';
import { LockName } from '../locks/lock-name.tsx';

const KIND: Record<AuditAction, string> = {
  'force-release': 'lock',
  kick: 'lock',
  'release-client': 'client',
  handoff: 'node',
  restore: 'node',
  'sign-in': 'session',
  'sign-out': 'session',
};

export function AuditTarget({ action, target }: { action: AuditAction; target: string }) {
  return (
    <span className="min-w-0 font-mono break-all" data-testid="audit-target" data-kind={KIND[action]}>
      {targetIsLock(action) ? <LockName name={target} /> : target}
    </span>
  );
}
