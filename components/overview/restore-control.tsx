import { useId, useState } from 'react';
import type { ClusterView } from '@/lib/ops-api/api-types.ts';
import { useRestore } from '../data/mutations.ts';
import { useAdminGate } from '../auth/use-admin-gate.ts';
import { useActionBlock } from '../data/use-data-now.ts';
import { buttonClass } from '../ui/button.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';

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
  const reasonId = useId();
  const [confirming, setConfirming] = useState(false);
  const mutation = useRestore();
  const gate = useAdminGate();
  const reason = useActionBlock() ?? restoreReason(cluster);
  const yielded = cluster.restore.yielded;
  return (
    <div className="flex flex-col gap-2">
      <div>
        <button
          type="button"
          data-testid="restore-button"
          className={buttonClass('secondary')}
          disabled={reason !== null || mutation.isPending}
          aria-describedby={reason === null ? undefined : reasonId}
          onClick={() => gate('restore yielded nodes', () => setConfirming(true))}
        >
          Restore priority
        </button>
      </div>
      {reason !== null && (
        <p id={reasonId} data-testid="restore-reason" className="text-sm text-slate-600 dark:text-slate-300">
          {reason}
        </p>
      )}
      {confirming && (
        <ConfirmDialog
          title="Restore priority?"
          confirmLabel="Confirm restore"
          testId="restore-dialog"
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            mutation.mutate({ pendingText: 'Restoring…' });
          }}
        >
          <p>
            {yielded.length === 1 ? 'Node ' : 'Nodes '}
            <strong className="font-mono">{yielded.join(', ')}</strong> handed the active role away. After a restore, the highest-priority node in sync takes it
            back by a graceful handoff.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
