// Passes a fast-changing value through at most once per `ms` (the last value always lands).
// The charts use it: deltas come ten times a second, redrawing SVG that often buys nothing.
import { useEffect, useRef, useState } from 'react';

/** `paused`: keep what is shown (the newest value lands at once when it turns false). */
export function useThrottled<T>(value: T, ms: number, paused = false): T {
  const [shown, setShown] = useState(value);
  // Nothing shown yet: the first change passes at once (performance.now() may still be under `ms`).
  const lastShownAt = useRef(Number.NEGATIVE_INFINITY);
  useEffect(() => {
    if (paused) return;
    const wait = lastShownAt.current + ms - performance.now();
    if (wait <= 0) {
      lastShownAt.current = performance.now();
      setShown(value);
      return;
    }
    const timer = setTimeout(() => {
      lastShownAt.current = performance.now();
      setShown(value);
    }, wait);
    return () => clearTimeout(timer);
  }, [value, ms, paused]);
  return shown;
}
