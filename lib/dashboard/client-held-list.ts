// The dashboard's "Release all held by this client" list, read page by page from
// GET /api/v1/clients/held (each page a short request the daemon answers between lock
// requests; a page may be short or empty and still have a cursor). It stops at the end of the
// table, or once it has as many locks as one bulk release takes (the rest: release these, then
// ask again).
import type { ClientHeldLock, ClientHeldView, ClientMatchKind } from '../ops-api/client-release-types.ts';
import type { ClientMatchView } from './client-match.ts';

/** Locks one bulk release takes at most (POST /api/v1/clients/force-release). */
export const RELEASE_LIST_MAX = 10_000;
/** Entries asked for per page: the server's maximum. */
export const HELD_PAGE_LIMIT = 1_000;

export interface ClientHeldList {
  /** Which of the holder's two names `client` was matched against. */
  by: ClientMatchKind;
  client: string;
  held: ClientHeldLock[];
  /** The list stopped at `max` locks: the client may hold more. */
  truncated: boolean;
}

/** Reads pages (`fetchPage(after, limit)`) until the table's end or `max` locks; `progress` hears the count after each page. */
export async function listClientHeld(
  match: ClientMatchView,
  fetchPage: (after: string | null, limit: number) => Promise<ClientHeldView>,
  progress: (found: number) => void = () => {},
  max = RELEASE_LIST_MAX,
): Promise<ClientHeldList> {
  const held: ClientHeldLock[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await fetchPage(after, Math.min(HELD_PAGE_LIMIT, max - held.length));
    held.push(...page.held);
    progress(held.length);
    if (page.nextCursor === null) return { by: match.by, client: match.value, held, truncated: false };
    if (held.length >= max) return { by: match.by, client: match.value, held, truncated: true };
    // A cursor that does not move on would ask for the same page forever.
    if (page.nextCursor === after) throw new Error(`the server gave the same cursor twice (${after})`);
    after = page.nextCursor;
  }
}
