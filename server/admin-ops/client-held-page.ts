// GET /api/v1/clients/held in pages: the locks one client holds, in name order, from the sorted
// name index (lock-index.ts), a bounded stretch of the table per request. Which holder belongs
// to the client is client-release.ts's rule (heldByClient); this file only pages.
//
// Why a bounded stretch, not only a bounded answer. The whole list (10,000 locks, 1.5 MB of
// JSON, after a walk of every lock) took the lock path's p99 to 24-169 ms with one reader in a
// loop at 100,000 held. A page now builds at most `limit` entries and looks at most at
// HELD_SCAN_NAMES names: finding the few locks of one client in a large table takes several
// requests, each a short turn of the loop, with the lock path served in between. So a page may
// be short, even empty, and still have a nextCursor: the caller goes on until it is null.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ClientHeldLock, ClientHeldView } from '../../lib/ops-api/client-release-types.ts';
import type { ClientMatch } from '../../lib/ops-api/admin-request.ts';
import { heldByClient } from './client-release.ts';
import type { LockIndex } from '../lock-views/lock-index.ts';
import type { HeldPage } from '../../lib/ops-api/page-queries.ts';
import type { ViewClock } from '../lock-views/lock-views.ts';

/** Names one page looks at, at most (about 1 ms of loop time at 100,000 locks). */
export const HELD_SCAN_NAMES = 10_000;

export async function clientHeldPage(
  engine: Pick<LockEngine, 'lock'>,
  index: LockIndex,
  clock: ViewClock,
  match: ClientMatch,
  page: HeldPage,
  scanNames = HELD_SCAN_NAMES,
): Promise<ClientHeldView> {
  const names = await index.current();
  const now = clock.now();
  const held: ClientHeldLock[] = [];
  let last: string | null = null;
  let scanned = 0;
  let ended = true;
  for (const name of names.walk(page.after, '', scanNames + 1)) {
    if (held.length === page.limit || scanned === scanNames) {
      ended = false;
      break;
    }
    scanned++;
    last = name;
    const h = engine.lock(name)?.holder ?? null;
    if (h === null || !heldByClient(h, match)) continue;
    held.push({
      name,
      token: h.token.toString(),
      protocol: h.protocol,
      client: h.client,
      clientName: h.clientName,
      heldForMs: Math.max(0, Math.round(now - h.grantedAt)),
      leaseRemainingMs: Math.max(0, Math.round(h.expiresAt - now)),
    });
  }
  // The last name looked at: a full page's last entry, or where the scan bound stopped the walk.
  const nextCursor = ended ? null : last;
  return { asOf: Math.round(clock.wall(now)), by: match.by, client: match.value, held, nextCursor, truncated: nextCursor !== null };
}
