import type { WaiterView } from '@/lib/ops-api/api-types.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';

/** Confirms a kick with the waiter the operator saw: its id, place, client and protocol (like force release). */
export function KickDialog({ lockName, waiter, onConfirm, onCancel }: { lockName: string; waiter: WaiterView; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ConfirmDialog
      title={
        <>
          Kick waiter {waiter.id} from{' '}
          <code className="font-mono break-all">
            <LockName name={lockName} />
          </code>
          ?
        </>
      }
      confirmLabel="Confirm kick"
      tone="danger"
      testId="kick-dialog"
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>The waiter leaves the queue and its client is told it was removed by an admin.</p>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
        <dt className="text-slate-500 dark:text-slate-400">Position</dt>
        <dd className="tabular-nums">{waiter.position}</dd>
        {waiter.clientName !== null && (
          <>
            <dt className="text-slate-500 dark:text-slate-400">Client</dt>
            <dd className="font-mono break-all" data-testid="kick-dialog-name">
              <ClientName name={waiter.clientName} />
            </dd>
          </>
        )}
        <dt className="text-slate-500 dark:text-slate-400">Address</dt>
        <dd className="font-mono break-all" data-testid="kick-dialog-client">
          {waiter.client}
        </dd>
        <dt className="text-slate-500 dark:text-slate-400">Protocol</dt>
        <dd>{waiter.protocol}</dd>
      </dl>
    </ConfirmDialog>
  );
}
