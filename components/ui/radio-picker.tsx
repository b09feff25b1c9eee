import { useId } from 'react';

/**
 * A choice of a few values as a row of buttons that are native radios underneath, so arrow keys
 * move the choice and a screen reader announces "<legend>, <label>, 2 of 3".
 */
export function RadioPicker<T extends string>({
  legend,
  testId,
  options,
  label,
  value,
  onChange,
}: {
  legend: string;
  testId: string;
  options: readonly T[];
  label: (option: T) => string;
  value: T;
  onChange: (option: T) => void;
}) {
  const name = useId();
  return (
    <fieldset className="flex items-center gap-1 text-sm" data-testid={testId}>
      <legend className="sr-only">{legend}</legend>
      {options.map((option) => (
        <label
          key={option}
          className="cursor-pointer rounded-md border border-slate-300 px-2 py-1 has-checked:border-sky-700 has-checked:bg-sky-700 has-checked:text-white has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-sky-600 dark:border-slate-600 dark:has-checked:border-sky-400 dark:has-checked:bg-sky-400 dark:has-checked:text-slate-950"
        >
          <input type="radio" className="sr-only" name={name} value={option} checked={value === option} onChange={() => onChange(option)} />
          {label(option)}
        </label>
      ))}
    </fieldset>
  );
}
