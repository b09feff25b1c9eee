import { useEffect, useId, useRef } from 'react';
import type { HolderView } from '@/lib/ops/api-types.ts';
import { buttonClass } from '../ui/button.ts';

/**
 * Confirms a force release with the holder the operator saw: its client, protocol and token.
 * The token shown is the token sent, so a lock that changed hands meanwhile answers 409 and
 * nothing is released. A native modal <dialog>: focus is trapped and Escape cancels.
 */
export function ForceReleaseDialog({ lockName, holder, onConfirm, onCancel }: { lockName: string; holder: HolderView; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  // Open as a modal once mounted. No close() on cleanup: its 'close' event would arrive after a
  // StrictMode re-mount and cancel the dialog; unmounting removes it from the top layer anyway.
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      data-testid="force-release-dialog"
      aria-labelledby={titleId}
      aria-describedby={descriptionId}
      onClose={onCancel}
      className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-slate-300 bg-white p-5 text-slate-900 shadow-xl backdrop:bg-slate-950/60 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
    >
      <h2 id={titleId} className="text-lg font-semibold">
        Force release <code className="font-mono break-all">{lockName}</code>?
      </h2>
      <div id={descriptionId} className="mt-3 text-sm">
        <p>The current holder loses the lock at once and the next waiter gets it.</p>
        <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
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
      </div>
      <div className="mt-5 flex flex-wrap justify-end gap-2">
        <button type="button" className={buttonClass('secondary')} onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" className={buttonClass('danger')} onClick={onConfirm}>
          Confirm force release
        </button>
      </div>
    </dialog>
  );
}
