// The JSON shapes of the bulk release by client (GET /api/v1/clients/held, POST
// /api/v1/clients/force-release), beside api-types.ts, shared by the server and the dashboard.
import type { Protocol } from './api-types.ts';

/**
 * How a bulk release names its client: by the identity it gave (keyed `I`, session `CLIENT`),
 * or by its address, never one for the other. A client chooses its identity, and may choose one
 * that reads as another client's address: a match by either would take that client's locks too.
 */
export const CLIENT_MATCH_KINDS = ['identity', 'address'] as const;
export type ClientMatchKind = (typeof CLIENT_MATCH_KINDS)[number];

/** One lock held by the client a `GET /api/v1/clients/held` names. */
export interface ClientHeldLock {
  name: string;
  /** Fencing token (decimal u64): the bulk release sends it back, so only this grant is released. */
  token: string;
  protocol: Protocol;
  /** The holder's address. */
  client: string;
  clientName: string | null;
  heldForMs: number;
  leaseRemainingMs: number;
}

/**
 * `GET /api/v1/clients/held?identity=` (or `?address=`) `&limit=&after=`: one page of the locks
 * whose holder's identity (or address) is exactly `client`, in name order. A page looks at a
 * bounded stretch of the table, so it may be short, even empty, with a nextCursor: the list is
 * complete when nextCursor is null.
 */
export interface ClientHeldView {
  asOf: number;
  /** Which of the holder's two names `client` was matched against. */
  by: ClientMatchKind;
  client: string;
  held: ClientHeldLock[];
  /** A lock name to pass as `after` for the next page; null when the walk reached the table's end. */
  nextCursor: string | null;
  /** nextCursor !== null: more of the table is still to be looked at (for readers from before paging). */
  truncated: boolean;
}

/** The answer of `POST /api/v1/clients/force-release`. */
export interface ClientReleaseResult {
  released: { name: string; token: string }[];
  /** Tokens asked for that were not released: no longer held, or held by another client. */
  stale: string[];
}
