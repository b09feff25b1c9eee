import { useId, useState } from 'react';
import type { ClusterView } from '@/lib/ops-api/api-types.ts';
import type { HandoffTaken } from '../data/handoff-progress.ts';
import { useHandoff } from '../data/mutations.ts';
import { useActionBlock } from '../data/use-data-now.ts';
import { inputClass } from '../ui/button.ts';
import { ConfirmedAction } from './confirmed-action.tsx';
import { HandoffStatus } from './handoff-status.tsx';

const ANY = '';

/**
 * Graceful handoff of the active role, to a standby chosen from cluster.handoff.targets or to
 * any (the active node picks the highest priority in sync). When the cluster says no, the
 * button is disabled and the reason sits next to it. From a standby's page the request is
 * forwarded to the active node.
 */
export function HandoffControl({ handoff }: { handoff: ClusterView['handoff'] }) {
  const selectId = useId();
  const [chosen, setChosen] = useState<string>(ANY);
  const mutation = useHandoff();
  // The standby that took over and its timeline entry, from the API's answer: the status follows it.
  const [taken, setTaken] = useState<HandoffTaken | null>(null);
  // Keep the choice while it is still a target; otherwise fall back to any standby.
  const target = chosen !== ANY && handoff.targets.includes(chosen) ? chosen : null;
  const blocked = useActionBlock();
  const reason = blocked ?? (!handoff.available ? (handoff.reason ?? 'Handoff is not available right now.') : null);
  const who = target ?? 'the highest-priority standby in sync';

  return (
    <div className="flex flex-col gap-2">
      <ConfirmedAction
        testId="handoff"
        label="Graceful handoff"
        needsAdminTo="hand off the active role"
        reason={reason}
        pending={mutation.isPending}
        leading={
          <div className="flex min-w-0 flex-col gap-1">
            <label htmlFor={selectId} className="text-xs text-slate-500 dark:text-slate-400">
              Handoff target
            </label>
            <select
              id={selectId}
              data-testid="handoff-target"
              className={inputClass}
              value={target ?? ANY}
              onChange={(e) => setChosen(e.target.value)}
              disabled={reason !== null}
            >
              <option value={ANY}>{handoff.targets.length === 0 ? 'No standby' : 'Any standby'}</option>
              {handoff.targets.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </div>
        }
        title="Hand off the active role?"
        confirmLabel="Confirm handoff"
        onConfirm={() => {
          setTaken(null);
          mutation.mutate({ target, pendingText: `Handing off to ${who}…`, onTakenOver: setTaken });
        }}
      >
        <p>
          The active node stops granting, ships its last events to <strong>{who}</strong>, which then serves clients. Held locks are kept.
        </p>
        <p className="mt-2 text-slate-600 dark:text-slate-300">The node that hands off does not take the role back by priority until it is restored.</p>
      </ConfirmedAction>
      <HandoffStatus taken={taken} mutation={mutation} />
    </div>
  );
}
