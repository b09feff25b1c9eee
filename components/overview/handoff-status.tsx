import type { UseMutationResult } from '@tanstack/react-query';
import { handoffStatusText } from '@/lib/dashboard/transition-format.ts';
import type { HandoffTaken } from '../data/handoff-progress.ts';
import type { HandoffVariables } from '../data/mutations.ts';
import { useCluster } from '../data/queries.ts';

/**
 * The handoff control's status: under way, then what the clients went through, live from the
 * successor's timeline entry (the page's node has it replicated, also once it is a standby),
 * until it is finished or failed. `data-state` is pending, settling, finished or failed. Not a
 * live region itself: the header's action status announces the same outcome (one aria-live place).
 */
export function HandoffStatus({ taken, mutation }: { taken: HandoffTaken | null; mutation: UseMutationResult<string, Error, HandoffVariables> }) {
  const cluster = useCluster();
  if (mutation.isIdle) return null;
  const entry = taken?.failover == null ? undefined : cluster?.failovers.find((f) => f.id === taken.failover);
  const live = taken === null ? null : handoffStatusText(taken.target, entry);
  let state: 'pending' | 'settling' | 'finished' | 'failed';
  let text: string;
  if (mutation.isError) {
    state = 'failed';
    text = mutation.error.message;
  } else if (mutation.isSuccess && (live === null || live.finished || taken?.failover === null)) {
    // The mutation read the same entry until it was finished: its text is the final word.
    state = 'finished';
    text = mutation.data;
  } else if (live === null) {
    state = 'pending';
    text = mutation.variables?.pendingText ?? 'Handing off…';
  } else {
    state = 'settling';
    text = live.text;
  }
  return (
    <p data-testid="handoff-status" data-state={state} className="text-sm text-slate-600 dark:text-slate-300">
      {text}
    </p>
  );
}
