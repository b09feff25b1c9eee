import type { ReactNode } from 'react';
import { useActionBlock } from '../data/use-data-now.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';
import { WORD_WRAPPED } from './unbroken.ts';

/**
 * Confirms a danger action on one claim of a lock (a force release of its holder, a kick of a
 * waiter) with the claim as the operator saw it: a title naming the action and the lock, what
 * the action does, then the claim's facts (ClaimFact rows), then an optional note.
 */
export function ClaimDialog({
  action,
  lockName,
  confirmLabel,
  testId,
  effect,
  note,
  onConfirm,
  onCancel,
  children,
}: {
  /** The title's words before the lock's name ("Force release", "Kick waiter 3 from"). */
  action: string;
  lockName: string;
  confirmLabel: string;
  testId: string;
  /** What happens on confirm, in one sentence. */
  effect: string;
  note?: string;
  onConfirm: () => void;
  onCancel: () => void;
  /** The claim's facts: ClaimFact and ClaimClientName rows. */
  children: ReactNode;
}) {
  const blocked = useActionBlock();
  return (
    <ConfirmDialog
      title={
        <>
          {action}{' '}
          <code className="font-mono break-all">
            <LockName name={lockName} />
          </code>
          ?
        </>
      }
      confirmLabel={confirmLabel}
      tone="danger"
      testId={testId}
      blocked={blocked}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>{effect}</p>
      <dl className="mt-3 grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1">{children}</dl>
      {note !== undefined && <p className="mt-3 text-slate-600 dark:text-slate-300">{note}</p>}
    </ConfirmDialog>
  );
}

/** One fact of the claim: its label and its value (`valueClass` for mono or tabular figures). */
export function ClaimFact({
  label,
  valueClass,
  testId,
  title,
  children,
}: {
  label: string;
  valueClass?: string;
  testId?: string;
  /** The whole value, when valueClass may cut it short (ONE_LINE, WORD_WRAPPED). */
  title?: string;
  children: ReactNode;
}) {
  return (
    <>
      <dt className="text-slate-500 dark:text-slate-400">{label}</dt>
      <dd className={valueClass} data-testid={testId} title={title}>
        {children}
      </dd>
    </>
  );
}

/** The claim's client name, a row only when the client gave one. */
export function ClaimClientName({ name, testId }: { name: string | null; testId: string }) {
  if (name === null) return null;
  return (
    <ClaimFact label="Client" valueClass={WORD_WRAPPED} testId={testId} title={name}>
      <ClientName name={name} />
    </ClaimFact>
  );
}
