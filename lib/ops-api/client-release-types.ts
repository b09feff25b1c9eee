// The JSON shapes of the bulk release by client (GET /api/v1/clients/held, POST
// /api/v1/clients/force-release), beside api-types.ts, shared by the server and the dashboard.
import type { Protocol } from './api-types.ts';

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

/** `GET /api/v1/clients/held?client=`: the locks whose holder's identity or address is exactly `client`, in name order. */
export interface ClientHeldView {
  asOf: number;
  client: string;
  held: ClientHeldLock[];
  /** More locks matched than the 10,000 listed (release these, then ask again). */
  truncated: boolean;
}

/** The answer of `POST /api/v1/clients/force-release`. */
export interface ClientReleaseResult {
  released: { name: string; token: string }[];
  /** Tokens asked for that were not released: no longer held, or held by another client. */
  stale: string[];
}
