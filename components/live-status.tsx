import { useLayoutEffect, useRef } from 'react';
import { useStreamStatus } from './data/queries.ts';
import { cn } from './ui/cn.ts';

const DOT: Record<string, string> = {
  live: 'bg-emerald-500',
  connecting: 'bg-amber-400 animate-pulse',
  disconnected: 'bg-red-500',
};

/**
 * "live" / "connecting" / "disconnected". The first time it says "live" it stamps
 * data-first-data-at with performance.now(): set in a layout effect, so it lands in the same
 * commit (and paint) as the first snapshot's rows.
 */
export function LiveStatus() {
  const { phase } = useStreamStatus();
  const ref = useRef<HTMLSpanElement>(null);
  const stamped = useRef(false);
  useLayoutEffect(() => {
    if (phase !== 'live' || stamped.current || ref.current === null) return;
    stamped.current = true;
    ref.current.setAttribute('data-first-data-at', String(Math.round(performance.now())));
  }, [phase]);
  return (
    // A status region: a screen reader hears the stream going down or coming back.
    <span role="status" className="inline-flex items-center gap-1.5 text-sm">
      <span aria-hidden="true" className={cn('inline-block size-2.5 rounded-full', DOT[phase])} />
      <span className="sr-only">Stream: </span>
      <span ref={ref} data-testid="live-status" className="font-medium">
        {phase}
      </span>
    </span>
  );
}
