// GET /api/v1/clients/waiting in pages: the waiters of one client across locks, by lock name,
// for the client view (issue 30). Paged like clients/held (server/admin-ops/client-held-page.ts)
// and for the same reason: a page builds at most `limit` entries and looks at most at
// WAITING_SCAN_NAMES names and WAITING_SCAN_WAITERS waiters, so it may be short, even empty,
// and still have a nextCursor. A page ends at a lock's boundary (its cursor is a name), so one
// lock's queue is walked whole: a walk of links, no allocation but the matches (a client waiting
// twice for one lock can make a page longer than `limit` by that).
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ClientMatch } from '../../lib/ops-api/admin-request.ts';
import type { ClientWaitingEntry, ClientWaitingView } from '../../lib/ops-api/lock-views-types.ts';
import type { HeldPage } from '../../lib/ops-api/page-queries.ts';
import type { LockIndex } from './lock-index.ts';
import type { ViewClock } from './lock-views.ts';

export const WAITING_SCAN_NAMES = 10_000;
export const WAITING_SCAN_WAITERS = 100_000;

/** The same rule as a bulk release's (client-release.ts heldByClient): exact, by the one name the request gave. */
function byClient(c: Claim, match: ClientMatch): boolean {
  return match.by === 'identity' ? c.clientName === match.value : c.client === match.value;
}

export async function clientWaitingPage(
  engine: Pick<LockEngine, 'lock'>,
  index: LockIndex,
  clock: ViewClock,
  match: ClientMatch,
  page: HeldPage,
  scan = { names: WAITING_SCAN_NAMES, waiters: WAITING_SCAN_WAITERS },
): Promise<ClientWaitingView> {
  const names = await index.current();
  const now = clock.now();
  const waiting: ClientWaitingEntry[] = [];
  let last: string | null = null;
  let scannedNames = 0;
  let scannedWaiters = 0;
  let ended = true;
  for (const name of names.walk(page.after, '', scan.names + 1)) {
    if (waiting.length >= page.limit || scannedNames === scan.names || scannedWaiters >= scan.waiters) {
      ended = false;
      break;
    }
    scannedNames++;
    last = name;
    const lock = engine.lock(name);
    if (lock === undefined || lock.waiting === 0) continue;
    let position = 1;
    for (let c = lock.head; c !== null; c = c.next, position++) {
      scannedWaiters++;
      if (!byClient(c, match)) continue;
      waiting.push({
        name,
        id: String(c.id),
        position,
        protocol: c.protocol,
        client: c.client,
        clientName: c.clientName,
        waitingForMs: Math.max(0, Math.round(now - c.enqueuedAt)),
        holderClient: lock.holder?.client ?? null,
        holderClientName: lock.holder?.clientName ?? null,
      });
    }
  }
  return { asOf: Math.round(clock.wall(now)), by: match.by, client: match.value, waiting, nextCursor: ended ? null : last };
}
