// Property 2 of the chaos checker (history-checker.ts): no two clients hold one lock at once,
// with the overlaps that are reported apart rather than as violations, each narrowly bounded.
import type { Violation } from './violation.ts';
import type { Hold } from './holds.ts';
import { intersect, subtract, totalLength, union, type Interval } from './intervals.ts';

/** A client-process stall explains an overlap up to its length plus this much (ms). */
export const STALL_SLACK_MS = 50;

export interface OverlapContext {
  /** Partition windows (partition-windows.ts: cut .. heal + peer timeout + a lease; a split brain: two actives may both grant, no quorum). */
  excluded: Interval[];
  /** Pauses (SIGSTOP..SIGCONT) of the node that was active when they began (see `pauseExemption`). */
  pauses: Interval[];
  near: (t: number) => string;
  stalls: Map<string, Interval[]>;
  /** The earliest the server could have granted each hold (see `earliestGrants`). */
  earliestGrant: Map<Hold, number>;
}

/** What the checker makes of two holds of one lock by different clients (`first.start <= second.start`). */
export type OverlapVerdict =
  | { kind: 'none' }
  | { kind: 'excluded'; overlap: Interval; note: string }
  | { kind: 'paused'; note: string }
  | { kind: 'lapse'; note: string }
  | { kind: 'stall'; note: string }
  | { kind: 'violation'; message: string };

/**
 * Per hold, the earliest the server could have granted it: the later of its request and the end
 * of the last hold of that lock by another client that ended before this grant arrived and whose
 * end the server cannot have freed it before (a release answered OK, not past its lease, or a
 * killed session: its connection closed after the kill). Holds that ended otherwise (loss
 * noticed, lease cap, killed keyed holder, STALE release) give no such bound and are skipped.
 * Capped at the grant's arrival. (It assumes the server had that release before it granted:
 * a successor that never saw the previous grant, after a kill -9, could grant earlier; such a
 * lost grant shows as an overlap of its own.)
 */
export function earliestGrants(holds: readonly Hold[]): Map<Hold, number> {
  const out = new Map<Hold, number>();
  for (const lockHolds of byLock(holds).values()) {
    const freers = lockHolds
      .filter((h) => !h.leaseCapped && ((h.endedBy === 'release' && h.releaseOutcome === 'ok') || (h.endedBy === 'killed' && h.protocol === 'session')))
      .sort((x, y) => x.end - y.end);
    for (const h of lockHolds) {
      let prevEnd = -Infinity;
      for (const p of freers) {
        if (p.end > h.start) break;
        if (p.client !== h.client) prevEnd = p.end;
      }
      out.set(h, Math.min(h.start, Math.max(h.requestedAt, prevEnd)));
    }
  }
  return out;
}

/**
 * What a pause of the active excuses for two holds: only a first hold granted (arrived) BEFORE the
 * pause began, overlapping a second granted after it began (by a successor that promoted while the
 * paused node could not answer), and only from the pause's start until the first holder's own
 * lease, counted from there, has run out, and no later than SIGCONT. The first holder cannot know
 * before: its node stopped answering (a session's heartbeats, a keyed release) and its lease,
 * counted from its last answer (no later than the pause's start), is what tells it. Any grant the
 * paused node makes after SIGCONT, any overlap of two grants made after the pause began, and
 * anything past pause start + lease are not excused (the grant gate guarantees the paused node
 * grants nothing from stale state once it wakes).
 */
export function pauseExemption(first: Hold, second: Hold, pauses: readonly Interval[]): Interval[] {
  return union(
    pauses.filter((p) => first.start < p.start && second.start >= p.start).map((p) => ({ start: p.start, end: Math.min(p.end, p.start + first.leaseMs) })),
  );
}

export function classifyOverlap(first: Hold, second: Hold, ctx: OverlapContext): OverlapVerdict {
  const overlap = intersect(first, second);
  if (overlap === null) return { kind: 'none' };
  const outsidePartitions = subtract([overlap], ctx.excluded);
  if (outsidePartitions.length === 0) {
    return {
      kind: 'excluded',
      overlap,
      note: `${first.lock}: ${first.client} (${first.protocol}, token ${first.token}) and ${second.client} (${second.protocol}, token ${second.token}) held it at once for ${(overlap.end - overlap.start).toFixed(1)} ms from ${iso(overlap.start)}`,
    };
  }
  const exempt = pauseExemption(first, second, ctx.pauses);
  const counted = subtract(outsidePartitions, exempt);
  if (counted.length === 0) {
    const pausedAt = exempt[0]?.start ?? overlap.start;
    return {
      kind: 'paused',
      note: `${first.lock}: ${first.client} (${first.protocol}, token ${first.token}, granted before the active paused at ${iso(pausedAt)}) overlapped ${second.client} (token ${second.token}, granted after) for ${totalLength(outsidePartitions).toFixed(1)} ms, within the first holder's lease from the pause`,
    };
  }
  const length = overlap.end - overlap.start;
  const lapseFrom = (ctx.earliestGrant.get(first) ?? first.requestedAt) + first.leaseMs;
  if (first.leaseCapped && overlap.start >= lapseFrom) {
    return {
      kind: 'lapse',
      note: `${first.lock}: keyed ${first.client} (token ${first.token}) was still at it when its lease ran out; ${second.client} got token ${second.token} ${length.toFixed(1)} ms before that lease's end as ${first.client} counted it (the server may have expired it from ${iso(lapseFrom)})`,
    };
  }
  // Either holder may have seen late what happened to it. The first: its loss, if its process did
  // not run during the overlap (or just before it). The second: a grant the old active made (and
  // dropped) before the first's, if its process did not run until (about) when that grant arrived.
  const own = (h: Hold) => ctx.stalls.get(h.client) ?? [];
  const firstWindow = { start: overlap.start - STALL_SLACK_MS, end: overlap.end };
  const firstStalled = totalLength(
    union(
      own(first)
        .map((x) => intersect(x, firstWindow))
        .filter((x) => x !== null),
    ),
  );
  const secondStalled = totalLength(
    union(
      own(second)
        .filter((x) => x.start <= second.start && x.end >= second.start - STALL_SLACK_MS)
        .map((x) => intersect(x, { start: second.requestedAt, end: overlap.end }))
        .filter((x) => x !== null),
    ),
  );
  const firstExplains = firstStalled > 0 && length <= firstStalled + STALL_SLACK_MS;
  const secondExplains = secondStalled > 0 && length <= secondStalled + STALL_SLACK_MS;
  if (firstExplains || secondExplains) {
    const note =
      firstExplains && (!secondExplains || firstStalled >= secondStalled)
        ? `${first.lock}: ${first.client} (token ${first.token}) did not run for ${Math.round(firstStalled)} ms during (or just before) a ${length.toFixed(1)} ms overlap with ${second.client} (token ${second.token}): it noticed its loss late`
        : `${first.lock}: ${second.client} (token ${second.token}) did not run for ${Math.round(secondStalled)} ms until its grant arrived, ${length.toFixed(1)} ms overlap with ${first.client} (token ${first.token}): it read an old grant late`;
    return { kind: 'stall', note };
  }
  const first_ = `${first.client} (${first.protocol}, token ${first.token}, ended by ${first.endedBy}${first.releaseOutcome ? ` ${first.releaseOutcome}` : ''})`;
  const second_ = `${second.client} (${second.protocol}, token ${second.token})`;
  return {
    kind: 'violation',
    message: `${first.lock}: ${first_} and ${second_} held it at once for ${totalLength(counted).toFixed(1)} ms from ${iso(overlap.start)}; ${ctx.near(overlap.start)}`,
  };
}

/** An overlap that lies wholly inside partition windows: allowed, and counted per window. */
export interface PartitionOverlap {
  overlap: Interval;
  note: string;
}

export function checkMutualExclusion(
  holds: Hold[],
  ctx: OverlapContext,
  violations: Violation[],
  lapses: string[],
  stalled: string[],
  paused: string[],
  inPartitions: PartitionOverlap[] = [],
): void {
  for (const lockHolds of byLock(holds).values()) {
    lockHolds.sort((x, y) => x.start - y.start);
    for (let i = 0; i < lockHolds.length; i++) {
      const first = lockHolds[i];
      if (first === undefined) continue;
      for (let j = i + 1; j < lockHolds.length; j++) {
        const second = lockHolds[j];
        if (second === undefined) break;
        if (second.start >= first.end) break;
        if (second.client === first.client) continue;
        const verdict = classifyOverlap(first, second, ctx);
        if (verdict.kind === 'lapse') lapses.push(verdict.note);
        else if (verdict.kind === 'stall') stalled.push(verdict.note);
        else if (verdict.kind === 'paused') paused.push(verdict.note);
        else if (verdict.kind === 'excluded') inPartitions.push({ overlap: verdict.overlap, note: verdict.note });
        else if (verdict.kind === 'violation') violations.push({ property: 'mutual-exclusion', message: verdict.message });
      }
    }
  }
}

export function byLock<T extends { lock: string }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.lock);
    if (list) list.push(item);
    else out.set(item.lock, [item]);
  }
  return out;
}

/** A time as HH:MM:SS.mmm (UTC), for messages. */
export function iso(t: number): string {
  const d = new Date(t);
  return `${d.toISOString().slice(11, 23)}`;
}
