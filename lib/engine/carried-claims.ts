// The owner of the resumable session claims a node kept when it took the active role (a
// handoff or a crash of the active): no connection stands behind them until their clients
// RESUME them. It counts how they end, for the failover timeline: taken up again, expired
// (the client did not come back within the lease), or ended otherwise (an admin).
import type { Claim, ClaimOwner, EndReason } from './claim.ts';

/**
 * The owner of a resumable session claim whose connection was reset under it on a live node
 * (an RST, not the client's FIN): kept for its client to RESUME within its lease, like a claim
 * carried over by a promotion, so that a client that lost its connection without closing it
 * does not go on believing it holds while the lock went to the next waiter.
 */
export const BETWEEN_CONNECTIONS: ClaimOwner = Object.freeze({
  detached: true,
  awaitingResume: true,
  onGranted: () => true,
  onEnded: () => {},
});

export class CarriedClaims implements ClaimOwner {
  readonly detached = true;
  readonly awaitingResume = true;
  /** Claims kept at the promotion (set by the caller from keepDetached). */
  carried = 0;
  resumed = 0;
  expired = 0;
  /** Force-released or kicked while between connections. */
  ended = 0;

  /** A waiter that reaches the lock while between connections holds it; its client learns on RESUME. */
  onGranted(_claim: Claim): boolean {
    return true;
  }

  onEnded(_claim: Claim, reason: EndReason): void {
    if (reason === 'expired' || reason === 'wait-timeout') this.expired++;
    else this.ended++;
  }

  onResumed(_claim: Claim): void {
    this.resumed++;
  }
}
