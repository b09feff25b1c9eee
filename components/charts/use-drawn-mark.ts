// Marks a chart's box `data-drawn="true"` once Recharts has put its SVG surface in it, and takes
// the mark off if the surface goes. The charts load after the page, draw only once their box has
// a size and pause while scrolled far away, so a test (or anything else) waits for this mark, not
// for a time (issue 30: e2e/dashboard.spec.ts waited 10 s for a surface on a busy machine).
// Set on the element itself: no React state, so no extra render.
import { type RefObject, useEffect } from 'react';

export function useDrawnMark(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const el = ref.current;
    if (el === null) return;
    const mark = () => {
      const svg = el.querySelector('svg.recharts-surface');
      const drawn = svg !== null && svg.getBoundingClientRect().width > 0;
      // Written only when it changes: an attribute write is a DOM change of its own.
      if (drawn && el.dataset.drawn !== 'true') el.dataset.drawn = 'true';
      else if (!drawn && el.dataset.drawn !== undefined) delete el.dataset.drawn;
    };
    mark();
    if (typeof MutationObserver === 'undefined') return;
    const observer = new MutationObserver(mark);
    observer.observe(el, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [ref]);
}
