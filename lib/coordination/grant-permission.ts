// When a node that holds the active role through an etcd lease may grant (issue 32's safety rule):
// only while it knows that lease cannot have expired. Pure: every time is a reading of the node's
// monotonic clock passed in by the caller; nothing here reads a clock or waits.
//
// Why the bound is measured from before the keep-alive was sent. etcd's leader resets a lease to
// its full TTL when it reads a keep-alive, and answers with that TTL. We cannot see when it read
// it, only when we sent it, and it cannot read it before we sent it. So a reply to a keep-alive
// sent at S proves the lease lives at least until S + TTL, counted on the leader's clock from a
// moment after S. Counted from when the reply came, the bound would include the reply's trip and
// any time the reply sat in a socket or behind a busy event loop: a node that read a stale reply
// late would grant past the lease's end. Etcd itself only lengthens this: a new etcd leader gives
// every lease its whole TTL again (plus an election timeout) when it takes over.
//
// Why a drift margin. The TTL runs on the etcd leader's clock and our bound on ours; if ours runs
// slow, the leader's TTL ends before ours does. `driftRate` is the largest rate difference we
// allow (1 % by default: NTP-disciplined clocks differ by under 500 ppm; 1 % also covers a
// VM whose clock is slewed hard after a pause), so TTL·(1 - driftRate) of our time is at most TTL
// of the leader's. `fixedMs` (50 ms by default) covers the granularity of etcd's lease clock
// (its expiry check runs every 500 ms, which only makes the lease last longer, and its TTL is in
// whole seconds) and the rounding of our own clock readings.
//
// What follows from it. A node cut off from etcd stops granting at S + TTL·(1 - driftRate) -
// fixedMs after its last answered keep-alive; the lease ends at etcd no earlier than S + TTL; only
// then can its key be deleted and another node's compare-and-swap win the role. So the cut-off
// node stops before any other node can start.

export interface PermissionMargins {
  /** The largest rate difference between our monotonic clock and the etcd leader's (0.01 = 1 %). */
  readonly driftRate: number;
  /** A fixed margin in ms taken off every bound. */
  readonly fixedMs: number;
}

export const DEFAULT_MARGINS: PermissionMargins = { driftRate: 0.01, fixedMs: 50 };

/**
 * How long a lease with `ttlMs` is known to live, counted from `sentAt`, the moment (before) the
 * request that set it (a keep-alive, or the lease grant itself) was sent: grants are allowed
 * strictly before the result.
 */
export function permittedUntil(sentAt: number, ttlMs: number, margins: PermissionMargins = DEFAULT_MARGINS): number {
  if (!(ttlMs > 0)) return Number.NEGATIVE_INFINITY;
  return sentAt + ttlMs * (1 - margins.driftRate) - margins.fixedMs;
}

/**
 * When to send the next keep-alive after one sent at `sentAt`: a third of the TTL later, as etcd's
 * own clients do, so two keep-alives can fail (or be slow) before the permission lapses.
 */
export function nextKeepAliveAt(sentAt: number, ttlMs: number): number {
  return sentAt + ttlMs / 3;
}

/** The validity of a TTL a margin leaves room for: a TTL must outlast its margin, or nobody could ever grant. */
export function checkMargins(ttlMs: number, margins: PermissionMargins = DEFAULT_MARGINS): string | null {
  if (!(margins.driftRate >= 0 && margins.driftRate < 1)) return `drift rate ${margins.driftRate} is not in [0, 1)`;
  if (!(margins.fixedMs >= 0)) return `fixed margin ${margins.fixedMs} ms is negative`;
  if (permittedUntil(0, ttlMs, margins) <= nextKeepAliveAt(0, ttlMs))
    return `a ${ttlMs} ms lease leaves no permission after its margins past the next keep-alive`;
  return null;
}

/**
 * The permission of one lease: the latest bound any answered keep-alive proved. Replies can come
 * in any order (a slow one after a faster later one): each proves its own bound, so the largest
 * counts. revoke() ends it for good (the lease was found gone, or this node resigns): a later
 * reply to an earlier keep-alive does not bring it back.
 */
export class GrantPermission {
  private until = Number.NEGATIVE_INFINITY;
  private revokedNow = false;

  constructor(private readonly margins: PermissionMargins = DEFAULT_MARGINS) {}

  /** A keep-alive (or the lease grant) sent at `sentAt` was answered with `ttlMs` left (0 or less: the lease is gone). */
  renewed(sentAt: number, ttlMs: number): void {
    if (this.revokedNow) return;
    if (!(ttlMs > 0)) {
      this.revoke();
      return;
    }
    const bound = permittedUntil(sentAt, ttlMs, this.margins);
    if (bound > this.until) this.until = bound;
  }

  /** Ends the permission at once and for good. */
  revoke(): void {
    this.revokedNow = true;
    this.until = Number.NEGATIVE_INFINITY;
  }

  get revoked(): boolean {
    return this.revokedNow;
  }

  /** Grants are allowed strictly before this (monotonic ms; -Infinity: never). */
  get permittedUntil(): number {
    return this.until;
  }

  mayGrant(now: number): boolean {
    return now < this.until;
  }
}
