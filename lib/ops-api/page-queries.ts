// What a paged read of the ops API asks for, as the route parsed it: the lock list, one lock's
// queue, the locks one client holds. The facade (daemon-facade.ts) takes these; the views that
// answer them are the daemon's (server/lock-views, server/admin-ops).

/** One page of GET /api/v1/locks: names in code-unit order starting with `prefix`. */
export interface LocksQuery {
  prefix: string;
  limit: number;
  /** The last name of the previous page; the page starts after it. */
  cursor: string | null;
}

/** One page of GET /api/v1/clients/held (client-held-page.ts). */
export interface HeldPage {
  /** Entries in the page, at most. */
  limit: number;
  /** The previous page's nextCursor (a lock name): the page starts after it; null: from the first name. */
  after: string | null;
}

/** One page of a lock's queue: `limit` waiters at most, after the waiter whose claim id is `after` (null: from the head). */
export interface QueuePage {
  limit: number;
  after: number | null;
}
