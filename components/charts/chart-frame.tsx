import { type ReactNode, useRef } from 'react';
import { Card } from '../ui/card.tsx';
import { useDrawnMark } from './use-drawn-mark.ts';

export const CHART_HEIGHT = 220;

/**
 * A chart's card: heading, a one-line description (what the chart can and cannot tell), the
 * test hook wrapper, an overlay message when there is nothing to plot yet, and what goes under
 * the chart in the same card (`after`: the failovers' list). The box says `data-drawn="true"` once
 * the chart's SVG is in it (use-drawn-mark.ts).
 */
export function ChartFrame({
  title,
  description,
  testId,
  empty,
  after,
  children,
  attributes,
}: {
  title: string;
  description: string;
  testId: string;
  empty?: string | null;
  after?: ReactNode;
  children: ReactNode;
  /** data-* attributes a test reads off the chart's box (its scale, the bucket in progress). */
  attributes?: Record<`data-${string}`, string | number>;
}) {
  const box = useRef<HTMLDivElement>(null);
  useDrawnMark(box);
  return (
    <Card title={title}>
      <p className="-mt-2 mb-2 text-xs text-slate-500 dark:text-slate-400">{description}</p>
      <div ref={box} data-testid={testId} className="relative w-full" style={{ height: CHART_HEIGHT }} {...attributes}>
        {children}
        {empty ? (
          <p className="pointer-events-none absolute inset-0 flex items-center justify-center text-sm text-slate-500 dark:text-slate-400">
            <span className="rounded bg-white/80 px-2 py-1 dark:bg-slate-900/80">{empty}</span>
          </p>
        ) : null}
      </div>
      {after}
    </Card>
  );
}
