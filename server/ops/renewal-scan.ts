// Session-protocol leases slide: each heartbeat moves the lease end (LockEngine.touch) without
// an engine event, since a heartbeat changes no holder or queue and the hot path should not pay
// for one. The dashboard counts leases down locally, so without news it would show a live
// session running out. Every RENEWAL_SCAN_MS, while a dashboard is open, this scan walks the
// locks and names those whose sliding holder was renewed by at least MIN_NEWS_MS since it was
// last reported: at most two updates a second per session, O(locks) per scan, nothing at all
// with no dashboard open. A shown countdown trails the truth by at most a scan and a flush.
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockState } from '../../lib/engine/lock-state.ts';

/** How often the scan runs (rounded to whole flushes). */
export const RENEWAL_SCAN_MS = 300;

/** A renewal smaller than this is not worth a message (the countdown is that close). */
const MIN_NEWS_MS = 500;

export class RenewalScan {
  /** The lease end each sliding holder had when it was last reported (or first seen). */
  private reported = new WeakMap<Claim, number>();

  /** Forget everything (a fresh snapshot reports every holder as it is). */
  reset(): void {
    this.reported = new WeakMap();
  }

  /** Calls `renewed(name)` for each lock whose sliding holder's lease moved on since last time. */
  scan(locks: Iterable<LockState>, renewed: (name: string) => void): void {
    for (const lock of locks) {
      const holder = lock.holder;
      if (holder === null || !holder.sliding) continue;
      const last = this.reported.get(holder);
      if (last === undefined) {
        // Granted since the last scan: the grant event already reported it.
        this.reported.set(holder, holder.expiresAt);
      } else if (holder.expiresAt - last >= Math.min(MIN_NEWS_MS, holder.leaseMs / 4)) {
        this.reported.set(holder, holder.expiresAt);
        renewed(lock.name);
      }
    }
  }
}
