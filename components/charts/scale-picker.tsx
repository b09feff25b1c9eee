import { useId } from 'react';
import { DURATION_SCALES, type DurationScale } from '@/lib/dashboard/chart-scale.ts';

const LABEL: Record<DurationScale, string> = { log: 'Log', linear: 'Linear' };

/**
 * The duration charts' y axis: log (the default: a 28 s outlier and 300 ms waits both stay
 * readable) or linear. Native radios, as the range picker.
 */
export function ScalePicker({ value, onChange }: { value: DurationScale; onChange: (scale: DurationScale) => void }) {
  const name = useId();
  return (
    <fieldset className="flex items-center gap-1 text-sm" data-testid="scale-picker">
      <legend className="sr-only">Duration axis</legend>
      {DURATION_SCALES.map((scale) => (
        <label
          key={scale}
          className="cursor-pointer rounded-md border border-slate-300 px-2 py-1 has-checked:border-sky-700 has-checked:bg-sky-700 has-checked:text-white has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-sky-600 dark:border-slate-600 dark:has-checked:border-sky-400 dark:has-checked:bg-sky-400 dark:has-checked:text-slate-950"
        >
          <input type="radio" className="sr-only" name={name} value={scale} checked={value === scale} onChange={() => onChange(scale)} />
          {LABEL[scale]}
        </label>
      ))}
    </fieldset>
  );
}
