import { useId } from 'react';
import { RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { HISTORY_RANGES, type HistoryRange } from '@/lib/ops-api/api-types.ts';

/**
 * The charts' time range as a radio group: native radios, so arrow keys move the choice and a
 * screen reader announces "Time range, 1 h, 2 of 3".
 */
export function RangePicker({ value, onChange }: { value: HistoryRange; onChange: (range: HistoryRange) => void }) {
  const name = useId();
  return (
    <fieldset className="flex items-center gap-1 text-sm" data-testid="range-picker">
      <legend className="sr-only">Time range</legend>
      {HISTORY_RANGES.map((range) => (
        <label
          key={range}
          className="cursor-pointer rounded-md border border-slate-300 px-2 py-1 has-checked:border-sky-700 has-checked:bg-sky-700 has-checked:text-white has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-sky-600 dark:border-slate-600 dark:has-checked:border-sky-400 dark:has-checked:bg-sky-400 dark:has-checked:text-slate-950"
        >
          <input type="radio" className="sr-only" name={name} value={range} checked={value === range} onChange={() => onChange(range)} />
          {RANGE_SPECS[range].label}
        </label>
      ))}
    </fieldset>
  );
}
