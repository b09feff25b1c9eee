import type { WaiterView } from '@/lib/ops-api/api-types.ts';
import { ClaimClientName, ClaimDialog, ClaimFact } from './claim-dialog.tsx';
import { ONE_LINE } from './unbroken.ts';

/** Confirms a kick with the waiter the operator saw: its id, place, client and protocol (like force release). */
export function KickDialog({ lockName, waiter, onConfirm, onCancel }: { lockName: string; waiter: WaiterView; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ClaimDialog
      action={`Kick waiter ${waiter.id} from`}
      lockName={lockName}
      confirmLabel="Confirm kick"
      testId="kick-dialog"
      effect="The waiter leaves the queue and its client is told it was removed by an admin."
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <ClaimFact label="Position" valueClass="tabular-nums">
        {waiter.position}
      </ClaimFact>
      <ClaimClientName name={waiter.clientName} testId="kick-dialog-name" />
      <ClaimFact label="Address" valueClass={ONE_LINE} testId="kick-dialog-client" title={waiter.client}>
        {waiter.client}
      </ClaimFact>
      <ClaimFact label="Protocol">{waiter.protocol}</ClaimFact>
    </ClaimDialog>
  );
}
