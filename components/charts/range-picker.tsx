import { RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { HISTORY_RANGES, type HistoryRange } from '@/lib/ops-api/api-types.ts';
import { RadioPicker } from '../ui/radio-picker.tsx';

const labelOf = (range: HistoryRange) => RANGE_SPECS[range].label;

/** The charts' time range ("Time range, 1 h, 2 of 3" to a screen reader). */
export function RangePicker({ value, onChange }: { value: HistoryRange; onChange: (range: HistoryRange) => void }) {
  return <RadioPicker legend="Time range" testId="range-picker" options={HISTORY_RANGES} label={labelOf} value={value} onChange={onChange} />;
}
