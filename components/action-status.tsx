import { useLastActionOutcome } from './data/mutations.ts';
import { cn } from './ui/cn.ts';

/** The one aria-live region for admin actions: the newest action's progress, result or error. */
export function ActionStatus({ className }: { className?: string }) {
  const outcome = useLastActionOutcome();
  return (
    <p
      data-testid="action-status"
      role="status"
      aria-live="polite"
      className={cn(
        'text-sm sm:min-h-[1.25rem]',
        outcome?.kind === 'error' && 'font-medium text-red-700 dark:text-red-300',
        outcome?.kind === 'success' && 'text-emerald-700 dark:text-emerald-300',
        outcome?.kind === 'pending' && 'text-slate-600 dark:text-slate-300',
        className,
      )}
    >
      {outcome?.text ?? ''}
    </p>
  );
}
