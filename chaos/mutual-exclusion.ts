// Property 2 of the chaos checker (history-checker.ts): no two clients hold one lock at once,
// with the overlaps that are reported apart rather than as violations, each narrowly bounded.
import type { Violation } from './history-checker.ts';
import type { Hold } from './holds.ts';
import { intersect, subtract, totalLength, union, type Interval } from './intervals.ts';

/** A client-process stall explains an overlap up to its length plus this much (ms). */
export const STALL_SLACK_MS = 50;
export function checkMutualExclusion(
  holds: Hold[], excluded: Interval[], near: (t: number) => string, violations: Violation[],
  lapses: string[], stalls: Map<string, Interval[]>, stalled: string[],
): void {
  for (const lockHolds of byLock(holds).values()) {
    lockHolds.sort((x, y) => x.start - y.start);
    for (let i = 0; i < lockHolds.length; i++) {
      const first = lockHolds[i] as Hold;
      for (let j = i + 1; j < lockHolds.length; j++) {
        const second = lockHolds[j] as Hold;
        if (second.start >= first.end) break;
        if (second.client === first.client) continue;
        const overlap = intersect(first, second);
        if (overlap === null) continue;
        const counted = subtract([overlap], excluded);
        if (counted.length === 0) continue;
        if (first.leaseCapped && overlap.start >= first.requestedAt + first.leaseMs) {
          lapses.push(`${first.lock}: keyed ${first.client} (token ${first.token}) was still at it when its lease ran out; ${second.client} got token ${second.token} ${(overlap.end - overlap.start).toFixed(1)} ms before that lease's end as ${first.client} counted it`);
          continue;
        }
        // Either holder may have seen late what happened to it: the first its loss (or grant), the
        // second a grant the old active made before the first's and dropped since.
        const stalledOf = (h: Hold) => totalLength(union((stalls.get(h.client) ?? []).map((x) => intersect(x, { start: h.requestedAt, end: overlap.end })).filter((x) => x !== null)));
        const [who, stalledMs] = [first, second].map((h) => [h, stalledOf(h)] as const).sort((x, y) => y[1] - x[1])[0] ?? [first, 0];
        if (stalledMs > 0 && overlap.end - overlap.start <= stalledMs + STALL_SLACK_MS) {
          const other = who === first ? second : first;
          stalled.push(`${first.lock}: ${who.client} (token ${who.token}) did not run for ${Math.round(stalledMs)} ms between its request and the end of a ${(overlap.end - overlap.start).toFixed(1)} ms overlap with ${other.client} (token ${other.token})`);
          continue;
        }
        const first_ = `${first.client} (${first.protocol}, token ${first.token}, ended by ${first.endedBy}${first.releaseOutcome ? ` ${first.releaseOutcome}` : ''})`;
        const second_ = `${second.client} (${second.protocol}, token ${second.token})`;
        violations.push({
          property: 'mutual-exclusion',
          message: `${first.lock}: ${first_} and ${second_} held it at once for ${totalLength(counted).toFixed(1)} ms from ${iso(overlap.start)}; ${near(overlap.start)}`,
        });
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
