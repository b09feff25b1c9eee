import type { ClusterView } from '@/lib/ops-api/api-types.ts';
import { useRestore } from '../data/mutations.ts';
import { useActionBlock } from '../data/use-data-now.ts';
import { ConfirmedAction } from './confirmed-action.tsx';

/** Why the button is off, in words next to it. */
function restoreReason(cluster: ClusterView): string | null {
  if (!cluster.clustered) return 'This node is not part of a cluster: nothing to restore.';
  if (!cluster.restore.available) return 'No node has handed the active role away.';
  return null;
}

/**
 * Lets nodes that gave the active role away by an API handoff take it back by priority again
 * (a higher-priority one then syncs and takes over by a graceful handoff).
 */
export function RestoreControl({ cluster }: { cluster: ClusterView }) {
  const mutation = useRestore();
  const reason = useActionBlock() ?? restoreReason(cluster);
  const yielded = cluster.restore.yielded;
  return (
    <ConfirmedAction
      testId="restore"
      label="Restore priority"
      needsAdminTo="restore yielded nodes"
      reason={reason}
      pending={mutation.isPending}
      title="Restore priority?"
      confirmLabel="Confirm restore"
      onConfirm={() => mutation.mutate({ pendingText: 'Restoring…' })}
    >
      <p>
        {yielded.length === 1 ? 'Node ' : 'Nodes '}
        <strong className="font-mono">{yielded.join(', ')}</strong> handed the active role away. After a restore, the highest-priority node in sync takes it
        back by a graceful handoff.
      </p>
    </ConfirmedAction>
  );
}
