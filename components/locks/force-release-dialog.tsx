import type { HolderView } from '@/lib/ops-api/api-types.ts';
import { ClaimClientName, ClaimDialog, ClaimFact } from './claim-dialog.tsx';
import { ONE_LINE } from './unbroken.ts';

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
    <ClaimDialog
      action="Force release"
      lockName={lockName}
      confirmLabel="Confirm force release"
      testId="force-release-dialog"
      effect="The current holder loses the lock at once and the next waiter gets it."
      note="If another claim holds it by the time you confirm, nothing is released."
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <ClaimClientName name={holder.clientName} testId="dialog-holder-name" />
      <ClaimFact label="Holder" valueClass={ONE_LINE} testId="dialog-holder-client" title={holder.client}>
        {holder.client}
      </ClaimFact>
      <ClaimFact label="Protocol">{holder.protocol}</ClaimFact>
      <ClaimFact label="Token" valueClass={ONE_LINE} testId="dialog-holder-token" title={holder.token}>
        {holder.token}
      </ClaimFact>
    </ClaimDialog>
  );
}
