// Passes a fast-changing value through at most once per `ms` (the last value always lands).
// The charts use it: deltas come ten times a second, redrawing SVG that often buys nothing.
import { useEffect, useRef, useState } from 'react';

export function useThrottled<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  // Nothing shown yet: the first change passes at once (performance.now() may still be under `ms`).
  const lastShownAt = useRef(Number.NEGATIVE_INFINITY);
  useEffect(() => {
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
  }, [value, ms]);
  return shown;
}
