import { type ReactNode, useEffect, useId, useRef } from 'react';
import { buttonClass } from './button.ts';

/**
 * A yes/no question before an action that changes the cluster. A native modal <dialog>: focus
 * is trapped, Escape cancels, and Cancel has the focus so Enter does not confirm by accident.
 * `blocked` (why the action cannot run now, e.g. the page lost its node while the dialog was
 * open) disables the confirm button and says why above it; it comes back on by itself.
 */
export function ConfirmDialog({
  title,
  confirmLabel,
  tone = 'primary',
  testId,
  blocked = null,
  onConfirm,
  onCancel,
  children,
}: {
  title: ReactNode;
  confirmLabel: string;
  tone?: 'primary' | 'danger';
  testId: string;
  blocked?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  const blockedId = useId();
  // Open as a modal once mounted. No close() on cleanup: its 'close' event would arrive after a
  // StrictMode re-mount and cancel the dialog; unmounting removes it from the top layer anyway.
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      data-testid={testId}
      aria-labelledby={titleId}
      aria-describedby={descriptionId}
      onClose={onCancel}
      className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-slate-300 bg-white p-5 text-slate-900 shadow-xl backdrop:bg-slate-950/60 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
    >
      <h2 id={titleId} className="text-lg font-semibold">
        {title}
      </h2>
      <div id={descriptionId} className="mt-3 text-sm">
        {children}
      </div>
      {blocked !== null && (
        <p id={blockedId} data-testid="confirm-blocked" className="mt-3 text-sm font-medium text-red-700 dark:text-red-300">
          {blocked}
        </p>
      )}
      <div className="mt-5 flex flex-wrap justify-end gap-2">
        <button type="button" className={buttonClass('secondary')} onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button
          type="button"
          className={buttonClass(tone)}
          disabled={blocked !== null}
          aria-describedby={blocked === null ? undefined : blockedId}
          onClick={onConfirm}
        >
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
