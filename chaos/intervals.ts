// Half-open time intervals [start, end) and the few operations the checker needs on them.

export interface Interval {
  start: number;
  end: number;
}

/** Sorted, non-overlapping, touching intervals merged; empty ones dropped. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((x, y) => x.start - y.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ start: i.start, end: i.end });
  }
  return out;
}

/** The parts of `from` (a union) not covered by `minus` (a union). */
export function subtract(from: readonly Interval[], minus: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const piece of from) {
    let cursor = piece.start;
    for (const m of minus) {
      if (m.end <= cursor || m.start >= piece.end) continue;
      if (m.start > cursor) out.push({ start: cursor, end: m.start });
      cursor = Math.max(cursor, m.end);
      if (cursor >= piece.end) break;
    }
    if (cursor < piece.end) out.push({ start: cursor, end: piece.end });
  }
  return out;
}

/** Total length of a union. */
export function totalLength(intervals: readonly Interval[]): number {
  return intervals.reduce((sum, i) => sum + (i.end - i.start), 0);
}

/** The intersection of two intervals, or null when they do not overlap. */
export function intersect(x: Interval, y: Interval): Interval | null {
  const start = Math.max(x.start, y.start);
  const end = Math.min(x.end, y.end);
  return end > start ? { start, end } : null;
}

/** Whether the point `t` lies in any of the intervals. */
export function covers(intervals: readonly Interval[], t: number): boolean {
  return intervals.some((i) => t >= i.start && t < i.end);
}
