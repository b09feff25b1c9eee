import { type ReactNode, useId, useState } from 'react';
import { useAdminGate } from '../auth/use-admin-gate.ts';
import { buttonClass } from '../ui/button.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';

/**
 * A cluster action behind a button and a confirm dialog (graceful handoff, restore priority).
 * When the action cannot run, the button is disabled and the reason sits next to it (not only
 * in a tooltip); a viewer who is not admin is asked to sign in first. Test ids are
 * `${testId}-button`, `${testId}-reason` and `${testId}-dialog`.
 */
export function ConfirmedAction({
  testId,
  label,
  needsAdminTo,
  reason,
  pending,
  leading,
  title,
  confirmLabel,
  onConfirm,
  children,
}: {
  testId: string;
  label: string;
  /** What the sign-in prompt says the admin role is needed for ("restore yielded nodes"). */
  needsAdminTo: string;
  /** Why the action cannot run now, or null when it can. */
  reason: string | null;
  pending: boolean;
  /** Controls in the button's row, before it (the handoff's target). */
  leading?: ReactNode;
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  /** The dialog's text: what the action will do. */
  children: ReactNode;
}) {
  const reasonId = useId();
  const [confirming, setConfirming] = useState(false);
  const gate = useAdminGate();
  return (
    <div className="flex flex-col gap-2">
      <div className={leading === undefined ? undefined : 'flex flex-wrap items-end gap-2'}>
        {leading}
        <button
          type="button"
          data-testid={`${testId}-button`}
          className={buttonClass('secondary')}
          disabled={reason !== null || pending}
          aria-describedby={reason === null ? undefined : reasonId}
          onClick={() => gate(needsAdminTo, () => setConfirming(true))}
        >
          {label}
        </button>
      </div>
      {reason !== null && (
        <p id={reasonId} data-testid={`${testId}-reason`} className="text-sm text-slate-600 dark:text-slate-300">
          {reason}
        </p>
      )}
      {confirming && (
        <ConfirmDialog
          title={title}
          confirmLabel={confirmLabel}
          testId={`${testId}-dialog`}
          blocked={reason}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            onConfirm();
          }}
        >
          {children}
        </ConfirmDialog>
      )}
    </div>
  );
}
