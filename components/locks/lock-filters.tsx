import { useId } from 'react';
import type { Protocol } from '@/lib/ops-api/api-types.ts';
import { filtersActive, type LockFilters } from '@/lib/dashboard/lock-table-query.ts';
import type { ViewParams } from '@/lib/dashboard/view-params.ts';
import type { HistoryMode } from '../data/use-view-params.ts';
import { buttonClass, inputClass } from '../ui/button.ts';
import { cn } from '../ui/cn.ts';

/** "expiring within 10 s" is the filter the issue asks for; a link may carry another number. */
export const DEFAULT_EXPIRING_S = 10;

export interface LockFiltersProps {
  /** What the table filters by now (the search and held fields as typed). */
  filters: LockFilters;
  search: string;
  onSearch(value: string): void;
  held: string;
  onHeld(value: string): void;
  update(patch: Partial<ViewParams>, mode: HistoryMode): void;
}

const labelClass = 'text-xs text-slate-600 dark:text-slate-400';

/** Search and filters of the lock table. Each change lands in the URL (see use-view-params.ts). */
export function LockFiltersBar({ filters, search, onSearch, held, onHeld, update }: LockFiltersProps) {
  const searchId = useId();
  const protoId = useId();
  const heldId = useId();
  const expiring = filters.expiringWithinS;
  return (
    <fieldset className="flex min-w-0 flex-wrap items-end gap-x-4 gap-y-2">
      <legend className="sr-only">Search and filters</legend>
      <div className="flex min-w-0 flex-col gap-1">
        <label htmlFor={searchId} className={labelClass}>
          Search locks
        </label>
        <input
          id={searchId}
          type="search"
          value={search}
          maxLength={200}
          onChange={(e) => onSearch(e.target.value)}
          placeholder="Name, holder or waiter address or identity…"
          className={cn(inputClass, 'w-72 max-w-full')}
        />
      </div>
      <div className="flex flex-col gap-1">
        <label htmlFor={protoId} className={labelClass}>
          Protocol
        </label>
        <select
          id={protoId}
          className={inputClass}
          value={filters.proto ?? ''}
          onChange={(e) => update({ proto: e.target.value === '' ? null : (e.target.value as Protocol) }, 'push')}
        >
          <option value="">Any</option>
          <option value="keyed">keyed</option>
          <option value="session">session</option>
        </select>
      </div>
      <label className="flex items-center gap-1.5 py-1.5 text-sm">
        <input type="checkbox" checked={filters.waiters} onChange={(e) => update({ waiters: e.target.checked }, 'push')} className="size-4" />
        Has waiters
      </label>
      <label className="flex items-center gap-1.5 py-1.5 text-sm">
        <input
          type="checkbox"
          checked={expiring !== null}
          onChange={(e) => update({ expiringWithinS: e.target.checked ? DEFAULT_EXPIRING_S : null }, 'push')}
          className="size-4"
        />
        <span title="Keyed (fixed) leases that end by then, sessions whose heartbeats are late, and session claims waiting to be resumed: not a session that heartbeats">
          Lease ends within {expiring ?? DEFAULT_EXPIRING_S} s
        </span>
      </label>
      <div className="flex flex-col gap-1">
        <label htmlFor={heldId} className={labelClass}>
          Held longer than (s)
        </label>
        <input
          id={heldId}
          type="number"
          inputMode="numeric"
          min={0}
          step={1}
          value={held}
          onChange={(e) => onHeld(e.target.value)}
          placeholder="any"
          className={cn(inputClass, 'w-28')}
        />
      </div>
      {filtersActive(filters) && (
        <button
          type="button"
          className={buttonClass('ghost', 'py-1.5')}
          onClick={() => {
            onSearch('');
            onHeld('');
            update({ q: '', proto: null, waiters: false, expiringWithinS: null, heldLongerThanS: null }, 'push');
          }}
        >
          Clear filters
        </button>
      )}
    </fieldset>
  );
}
