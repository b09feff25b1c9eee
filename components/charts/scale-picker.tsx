import { DURATION_SCALES, type DurationScale } from '@/lib/dashboard/chart-scale.ts';
import { RadioPicker } from '../ui/radio-picker.tsx';

const LABEL: Record<DurationScale, string> = { log: 'Log', linear: 'Linear' };
const labelOf = (scale: DurationScale) => LABEL[scale];

/**
 * The duration charts' y axis: log (the default: a 28 s outlier and 300 ms waits both stay
 * readable) or linear.
 */
export function ScalePicker({ value, onChange }: { value: DurationScale; onChange: (scale: DurationScale) => void }) {
  return <RadioPicker legend="Duration axis" testId="scale-picker" options={DURATION_SCALES} label={labelOf} value={value} onChange={onChange} />;
}
