// Whether an element is on screen or within 200 px of it. The charts stop redrawing while the
// operator is elsewhere on the page (their SVG and Recharts' own store cost a page a tenth of a
// core under churn) and catch up the moment they come back into view.
import { type RefObject, useEffect, useState } from 'react';

export function useNearViewport(ref: RefObject<Element | null>): boolean {
  // Until the observer answers, assume on screen: nothing is held back before we know.
  const [near, setNear] = useState(true);
  useEffect(() => {
    const el = ref.current;
    if (el === null || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        const last = entries[entries.length - 1];
        if (last !== undefined) setNear(last.isIntersecting);
      },
      { rootMargin: '200px 0px' },
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return near;
}
