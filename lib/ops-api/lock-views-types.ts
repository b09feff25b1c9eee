// The JSON shapes of the operator's finding views (issue 30): the most contended locks
// (GET /api/v1/contention), what one client waits for (GET /api/v1/clients/waiting), and the
// locks whose waiters match a search (GET /api/v1/waiters/search). Shared by the server and the
// dashboard, beside api-types.ts.
import type { HolderView, Protocol } from './api-types.ts';
import type { ClientMatchKind } from './client-release-types.ts';

/** The ranges the contention view looks back over (the charts' longer two). */
export const CONTENTION_RANGES = ['1h', '24h'] as const;
export type ContentionRange = (typeof CONTENTION_RANGES)[number];

/** A lock somebody waits for now. */
export interface ContendedNow {
  name: string;
  queueLength: number;
  /** How long the first waiter has waited so far. */
  longestWaitMs: number;
  holder: HolderView | null;
}

/** A lock's queued grants over the range (grants that had waited in its queue). */
export interface ContendedOver {
  name: string;
  /** Grants that waited in the queue. */
  queuedGrants: number;
  /** The longest of their waits, and their sum. */
  maxWaitMs: number;
  totalWaitMs: number;
  /** The longest queue a waiter joined (its position on joining). */
  maxQueue: number;
}

/**
 * `GET /api/v1/contention?range=1h|24h&limit=`: the locks with the longest queues now (by queue
 * length, then by the first waiter's wait), and the locks whose waiters waited longest in total
 * over the range, each at most `limit`. The range is kept in 5-minute buckets, each keeping its
 * 64 most waited-for locks (server/lock-views/contention-tracker.ts): a lock that waited more
 * than a 64th of a bucket's waiting is always kept; one that fell out of a bucket and came back
 * counts from its return, so its figures are a lower bound then.
 */
export interface ContentionView {
  asOf: number;
  range: ContentionRange;
  now: ContendedNow[];
  over: ContendedOver[];
  /** Locks with a queue now (all of them, not only the `limit` listed). */
  queuedLocks: number;
}

/** One waiter of the client a `GET /api/v1/clients/waiting` names. */
export interface ClientWaitingEntry {
  name: string;
  /** The waiter's claim id (decimal): the `{id}` of the kick route. */
  id: string;
  /** 1 = next in line. */
  position: number;
  protocol: Protocol;
  client: string;
  clientName: string | null;
  waitingForMs: number;
  /** The lock's holder now (the client waits for it). */
  holderClient: string | null;
  holderClientName: string | null;
}

/**
 * `GET /api/v1/clients/waiting?identity=` (or `?address=`) `&limit=&after=`: one page of the
 * waiters whose identity (or address) is exactly `client`, by lock name, like clients/held: a
 * page looks at a bounded stretch of the table, so it may be short, even empty, with a
 * nextCursor; the list is complete when nextCursor is null.
 */
export interface ClientWaitingView {
  asOf: number;
  by: ClientMatchKind;
  client: string;
  waiting: ClientWaitingEntry[];
  nextCursor: string | null;
}

/**
 * `GET /api/v1/waiters/search?q=&limit=`: the names of locks one of whose waiters' address or
 * identity contains `q` (case-insensitive), in no particular order; `truncated` when the
 * answer stopped at `limit` names or at the scan's bound before looking at every waiter.
 */
export interface WaiterSearchView {
  asOf: number;
  q: string;
  locks: string[];
  truncated: boolean;
}
