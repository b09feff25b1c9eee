import { useId, useState } from 'react';
import type { ClusterView } from '@/lib/ops/api-types.ts';
import { useHandoff } from '../data/mutations.ts';
import { buttonClass, inputClass } from '../ui/button.ts';

/**
 * Graceful handoff to a standby chosen from cluster.handoff.targets. When the cluster says no,
 * the button is disabled and the reason sits next to it (not only in a tooltip).
 */
export function HandoffControl({ handoff }: { handoff: ClusterView['handoff'] }) {
  const selectId = useId();
  const reasonId = useId();
  const [chosen, setChosen] = useState<string | null>(null);
  const mutation = useHandoff();
  // Keep the choice while it is still a target; otherwise fall back to the first (highest priority).
  const target = chosen !== null && handoff.targets.includes(chosen) ? chosen : (handoff.targets[0] ?? null);
  const disabled = !handoff.available || target === null || mutation.isPending;
  const reason = !handoff.available ? (handoff.reason ?? 'Handoff is not available right now.') : target === null ? 'No standby to hand off to.' : null;

  return (
    <div className="flex flex-col gap-2">
      <div className="flex flex-wrap items-end gap-2">
        <div className="flex min-w-0 flex-col gap-1">
          <label htmlFor={selectId} className="text-xs text-slate-500 dark:text-slate-400">
            Handoff target
          </label>
          <select
            id={selectId}
            className={inputClass}
            value={target ?? ''}
            onChange={(e) => setChosen(e.target.value)}
            disabled={handoff.targets.length === 0}
          >
            {handoff.targets.length === 0 && <option value="">No standby</option>}
            {handoff.targets.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          className={buttonClass('secondary')}
          disabled={disabled}
          aria-describedby={reason === null ? undefined : reasonId}
          onClick={() => {
            if (target !== null) mutation.mutate({ target, pendingText: `Handing off to ${target}…` });
          }}
        >
          Graceful handoff
        </button>
      </div>
      {reason !== null && (
        <p id={reasonId} data-testid="handoff-reason" className="text-sm text-slate-600 dark:text-slate-300">
          {reason}
        </p>
      )}
    </div>
  );
}
