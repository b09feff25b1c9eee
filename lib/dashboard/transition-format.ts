// How the console words a handoff or failover as its clients saw it (FailoverView.clients): the
// longest client stall first (what clients felt), the daemon's gap named as what it is (the time
// with no active node), and what became of the claims. The page used to show only "gap 6.3 ms"
// while clients of one lock stalled 5.2 s behind a claim that had to expire first.
import type { FailoverView, TransitionClients } from '../ops-api/api-types.ts';
import { formatCount, formatLatency } from './dashboard-format.ts';

/** A stall or gap for people: "17.7 ms", "3.9 s", "1.5 min". */
export function formatStall(ms: number): string {
  if (ms < 1_000) return formatLatency(ms);
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** "no active node for 17.7 ms": the daemon's gap, by its name. */
export function gapText(f: Pick<FailoverView, 'gapMs' | 'cause'>): string {
  return f.cause === 'split-brain' ? 'two actives met (no gap)' : `no active node for ${formatStall(f.gapMs)}`;
}

/** "longest client stall 3.9 s", "no client stalled", or "longest client stall so far 40 ms" while claims are still to come. */
export function stallText(c: TransitionClients): string {
  if (c.longestStallMs === null) return c.finishedAt === null ? 'no client stall measured yet' : 'no client stalled';
  return `longest client stall${c.finishedAt === null ? ' so far' : ''} ${formatStall(c.longestStallMs)}`;
}

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/**
 * What became of the claims: "3 claims moved, 1 expired, 1 lost, 2 keyed requests re-sent (2
 * granted again)", then what is still awaited ("1 still reconnecting").
 */
export function claimFatesText(c: TransitionClients): string {
  const parts = [`${plural(c.moved, 'claim', 'claims')} moved`, `${formatCount(c.expired)} expired`, `${formatCount(c.lost)} lost`];
  if (c.ended > 0) parts.push(`${formatCount(c.ended)} ended by an admin`);
  if (c.requeued > 0) parts.push(`${plural(c.requeued, 'keyed request', 'keyed requests')} re-sent (${formatCount(c.regranted)} granted again)`);
  if (c.reconnecting > 0) parts.push(`${formatCount(c.reconnecting)} still reconnecting`);
  return parts.join(', ');
}

/** One line for the timeline: stall, gap and fates; null for an entry without client figures. */
export function transitionSummary(f: FailoverView): string | null {
  const c = f.clients;
  if (c === undefined) return null;
  return `${stallText(c)} (${gapText(f)}); ${claimFatesText(c)}`;
}

/**
 * The handoff control's status for a handoff to `target` whose entry is `entry` (undefined while
 * the page has not received it yet): under way, then finished with the figures.
 */
export function handoffStatusText(target: string, entry: FailoverView | undefined): { text: string; finished: boolean } {
  const c = entry?.clients;
  if (entry === undefined || c === undefined)
    return { text: `Graceful handoff to ${target}: ${target} took over; waiting for the clients' figures…`, finished: false };
  if (c.finishedAt === null) {
    return { text: `Graceful handoff to ${target}: ${target} is active (${gapText(entry)}); ${claimFatesText(c)}; ${stallText(c)}…`, finished: false };
  }
  return { text: `Graceful handoff to ${target} finished: ${claimFatesText(c)}; ${stallText(c)} (${gapText(entry)}).`, finished: true };
}
