// Partition windows of a chaos run, and the overlaps inside them. Without a quorum a partition
// may make two actives, and both may grant the same lock: an overlap of two holders is allowed
// only inside a partition window, and each one is counted and reported with its window.
//
// A window runs from the cut to the heal + the peer timeout + the longest lease. Why that bound
// (docs/cluster.md, "Split brain, and what can be lost"): once healed, the links redial (every
// 150 ms) and the two actives hear each other; the lower-priority one steps down within one
// heartbeat (peer timeout / 5) of that, ending its sessions with a REDIRECT at once. The peer
// timeout covers redial, handshake and that heartbeat with room to spare (on loopback the step-down
// comes a few hundred ms after the heal; server/cluster/cluster-partition.test.ts). A keyed grant
// the stepping-down active made just before it is never revoked to its holder: the holder counts
// on it until its lease ends, hence + the lease. Partitions are recorded one window per fault: a
// flapping link's window runs from its first cut to its last heal (+ the same bound).
import type { History } from './history.ts';
import { covers, intersect, type Interval, union } from './intervals.ts';
import type { PartitionOverlap } from './mutual-exclusion.ts';

export interface PartitionWindow {
  /** What was cut, as the injector described it. */
  target: string;
  start: number;
  /** When the links were healed (the last heal of a flap). */
  heal: number;
  /** heal + peer timeout + the longest lease: overlaps are allowed until here. */
  end: number;
  /** What the nodes made of it (the actives seen before the heal), if recorded. */
  observed?: string;
  /** Overlaps of two holders of a lock that lie inside the windows and begin in this one. */
  overlaps: number;
  overlapMs: number;
}

export function partitionWindows(history: History): PartitionWindow[] {
  return history.faults
    .filter((f) => f.kind === 'partition')
    .sort((x, y) => x.start - y.start)
    .map((f) => ({
      target: f.target,
      start: f.start,
      heal: f.end,
      end: f.end + history.peerTimeoutMs + history.maxLeaseMs,
      ...(f.observed === undefined ? {} : { observed: f.observed }),
      overlaps: 0,
      overlapMs: 0,
    }));
}

/** The windows as intervals (merged): what the mutual-exclusion and token-order checks leave out. */
export function windowIntervals(windows: readonly PartitionWindow[]): Interval[] {
  return union(windows.map((w) => ({ start: w.start, end: w.end })));
}

/**
 * Counts each overlap (already known to lie inside the windows) in the window it begins in (the
 * latest cut, when it begins in the tail of one window and the cut of the next), or else the
 * first it meets; returns one note per overlap naming its window.
 */
export function countPartitionOverlaps(windows: PartitionWindow[], overlaps: readonly PartitionOverlap[]): string[] {
  const notes: string[] = [];
  for (const o of overlaps) {
    const index = windows.findLastIndex((w) => covers([w], o.overlap.start));
    const i = index >= 0 ? index : windows.findIndex((w) => intersect(w, o.overlap) !== null);
    const w = windows[i];
    if (w === undefined) continue;
    w.overlaps++;
    w.overlapMs += o.overlap.end - o.overlap.start;
    notes.push(`overlap inside partition window #${i + 1} (${w.target}; allowed, no quorum): ${o.note}`);
  }
  return notes;
}

/** One line per window for the report: times from the clients' start, what happened, the overlaps. */
export function formatPartitionWindow(w: PartitionWindow, i: number, runStart: number): string {
  const s = (t: number) => `+${((t - runStart) / 1000).toFixed(1)}s`;
  const seen = w.observed === undefined ? '' : `; ${w.observed}`;
  return `#${i + 1} ${s(w.start)}..${s(w.heal)} (allowed until ${s(w.end)}) ${w.target}${seen}: ${w.overlaps} overlaps, ${w.overlapMs.toFixed(1)} ms in all`;
}
