// Passes a fast-changing value through at most once per `ms` (the last value always lands).
// The charts use it: deltas come ten times a second, redrawing SVG that often buys nothing.
import { useEffect, useRef, useState } from 'react';

/**
 * `paused`: keep what is shown (the newest value lands at once when it turns false), once there
 * is something to show: the first defined value passes even while paused, so that a section
 * far below the screen has its data (and its elements) when it is scrolled to, instead of
 * "waiting for the first snapshot" on a page that is live.
 */
export function useThrottled<T>(value: T, ms: number, paused = false): T {
  const [shown, setShown] = useState(value);
  // Nothing shown yet: the first change passes at once (performance.now() may still be under `ms`).
  const lastShownAt = useRef(Number.NEGATIVE_INFINITY);
  const hasShown = useRef(value !== undefined);
  useEffect(() => {
    if (paused && hasShown.current) return;
    const show = () => {
      lastShownAt.current = performance.now();
      hasShown.current ||= value !== undefined;
      setShown(value);
    };
    const wait = lastShownAt.current + ms - performance.now();
    if (wait <= 0) {
      show();
      return;
    }
    const timer = setTimeout(show, wait);
    return () => clearTimeout(timer);
  }, [value, ms, paused]);
  return shown;
}
