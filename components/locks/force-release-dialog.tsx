import type { HolderView } from '@/lib/ops-api/api-types.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';

/**
 * Confirms a force release with the holder the operator saw: its client, protocol and token.
 * The token shown is the token sent, so a lock that changed hands meanwhile answers 409 and
 * nothing is released.
 */
export function ForceReleaseDialog({
  lockName,
  holder,
  onConfirm,
  onCancel,
}: {
  lockName: string;
  holder: HolderView;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <ConfirmDialog
      title={
        <>
          Force release{' '}
          <code className="font-mono break-all">
            <LockName name={lockName} />
          </code>
          ?
        </>
      }
      confirmLabel="Confirm force release"
      tone="danger"
      testId="force-release-dialog"
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>The current holder loses the lock at once and the next waiter gets it.</p>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
        {holder.clientName !== null && (
          <>
            <dt className="text-slate-500 dark:text-slate-400">Client</dt>
            <dd className="font-mono break-all" data-testid="dialog-holder-name">
              <ClientName name={holder.clientName} />
            </dd>
          </>
        )}
        <dt className="text-slate-500 dark:text-slate-400">Holder</dt>
        <dd className="font-mono break-all" data-testid="dialog-holder-client">
          {holder.client}
        </dd>
        <dt className="text-slate-500 dark:text-slate-400">Protocol</dt>
        <dd>{holder.protocol}</dd>
        <dt className="text-slate-500 dark:text-slate-400">Token</dt>
        <dd className="font-mono break-all" data-testid="dialog-holder-token">
          {holder.token}
        </dd>
      </dl>
      <p className="mt-3 text-slate-600 dark:text-slate-300">If another claim holds it by the time you confirm, nothing is released.</p>
    </ConfirmDialog>
  );
}
