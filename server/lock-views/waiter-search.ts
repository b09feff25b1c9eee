// GET /api/v1/waiters/search: the locks one of whose waiters' address or identity contains the
// search text, so the dashboard's search finds a lock by who waits for it (issue 30), not only
// by its name and holder (the table has each lock's queue length, not its waiters). Only locks
// with a queue are looked at (the contention tracker's set), and at most SEARCH_SCAN_WAITERS
// waiters per request: a search is a short turn of the loop however long the queues are.
import type { Claim } from '../../lib/engine/claim.ts';
import type { WaiterSearchView } from '../../lib/ops-api/lock-views-types.ts';
import type { ContentionTracker } from './contention-tracker.ts';
import type { ViewClock } from './lock-views.ts';

export const SEARCH_SCAN_WAITERS = 100_000;

function waiterContains(c: Claim, needle: string): boolean {
  return c.client.toLowerCase().includes(needle) || c.clientName?.toLowerCase().includes(needle) === true;
}

export function searchWaiters(
  tracker: Pick<ContentionTracker, 'forEachQueued'>,
  clock: ViewClock,
  q: string,
  limit: number,
  scanWaiters = SEARCH_SCAN_WAITERS,
): WaiterSearchView {
  const needle = q.trim().toLowerCase();
  const locks: string[] = [];
  let scanned = 0;
  let truncated = false;
  if (needle !== '') {
    tracker.forEachQueued((lock) => {
      for (let c = lock.head; c !== null; c = c.next) {
        if (scanned === scanWaiters) {
          truncated = true;
          return false;
        }
        scanned++;
        if (waiterContains(c, needle)) {
          if (locks.length === limit) {
            truncated = true;
            return false;
          }
          locks.push(lock.name);
          break;
        }
      }
      return true;
    });
  }
  return { asOf: Math.round(clock.wall(clock.now())), q, locks, truncated };
}
