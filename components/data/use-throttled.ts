// Passes a fast-changing value through at most once per `ms` (the last value always lands).
// The charts use it: deltas come ten times a second, redrawing SVG that often buys nothing.
import { useEffect, useRef, useState } from 'react';

export function useThrottled<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  const lastShownAt = useRef(0);
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
