// Per-lock token order over the whole run, pauses and failovers included: a grant of a lock whose
// request was sent after an earlier grant of that lock had reached its client was made after it in
// real time, so its token must be above that one's. Ordering by the request (not by when a grant
// arrived) keeps a client that read its grant late from looking out of order. Only partitions
// (each + a lease) are left out: a split brain's two actives draw tokens independently (no quorum).
import type { Violation } from './violation.ts';
import type { Hold } from './holds.ts';
import { covers, type Interval } from './intervals.ts';
import { byLock, iso } from './mutual-exclusion.ts';

/** Clock skew allowed between two processes' stamps (performance.timeOrigin of each), ms. */
export const ORDER_SKEW_MS = 1;

export function checkTokenOrder(holds: readonly Hold[], partitions: readonly Interval[], violations: Violation[]): number {
  let checked = 0;
  for (const [lock, lockHolds] of byLock(holds)) {
    const counted = lockHolds.filter((h) => !covers(partitions, h.start) && !covers(partitions, h.requestedAt));
    const byArrival = [...counted].sort((x, y) => x.start - y.start);
    const byRequest = [...counted].sort((x, y) => x.requestedAt - y.requestedAt);
    let next = 0;
    let top: Hold | undefined;
    for (const g of byRequest) {
      for (let h = byArrival[next]; h !== undefined && h.start + ORDER_SKEW_MS < g.requestedAt; h = byArrival[next]) {
        if (top === undefined || BigInt(h.token) > BigInt(top.token)) top = h;
        next++;
      }
      if (top === undefined || top === g) continue;
      checked++;
      if (BigInt(g.token) <= BigInt(top.token)) {
        violations.push({
          property: 'token-order',
          message: `${lock}: ${g.client} asked at ${iso(g.requestedAt)} and got token ${g.token} at ${iso(g.start)}, not above token ${top.token} that ${top.client} had received at ${iso(top.start)}`,
        });
      }
    }
  }
  return checked;
}
