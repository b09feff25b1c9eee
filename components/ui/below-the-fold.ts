// The sections under the lock table (overview cards, charts, feed and audit) change with every
// delta but are off screen at first. `content-visibility: auto` lets the browser skip their
// style, layout and paint until they near the viewport: at 10,000 locks and 2,000 pairs a
// second, that took one page's renderer from about 47 % to 37 % of a core here. They stay in
// the accessibility tree and in find-in-page; the reserved height (remembered once drawn) keeps
// the scroll bar from jumping.
export const BELOW_THE_FOLD = '[content-visibility:auto] [contain-intrinsic-size:auto_600px]';
