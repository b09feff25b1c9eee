// The client view's list of what one client waits for, read page by page from
// GET /api/v1/clients/waiting (each page a short request; a page may be short or empty and still
// have a cursor), up to `max` entries: the view shows a bounded list and says when there is more.
import type { ClientWaitingEntry, ClientWaitingView } from '../ops-api/lock-views-types.ts';

/** Waiters the client view lists at most. */
export const WAITING_LIST_MAX = 1_000;

export interface ClientWaitingList {
  waiting: ClientWaitingEntry[];
  /** The list stopped at `max`: the client may wait for more. */
  truncated: boolean;
}

export async function listClientWaiting(
  fetchPage: (after: string | null, limit: number) => Promise<ClientWaitingView>,
  max = WAITING_LIST_MAX,
): Promise<ClientWaitingList> {
  const waiting: ClientWaitingEntry[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await fetchPage(after, Math.max(1, Math.min(1_000, max - waiting.length)));
    waiting.push(...page.waiting);
    if (page.nextCursor === null) return { waiting: waiting.slice(0, max), truncated: waiting.length > max };
    if (waiting.length >= max) return { waiting: waiting.slice(0, max), truncated: true };
    // A cursor that does not move on would ask for the same page forever.
    if (page.nextCursor === after) throw new Error(`the server gave the same cursor twice (${after})`);
    after = page.nextCursor;
  }
}
