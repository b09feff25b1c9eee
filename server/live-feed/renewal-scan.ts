// Session-protocol leases slide: each heartbeat moves the lease end (LockEngine.touch) without
// an engine event, since a heartbeat changes no holder or queue and the hot path should not pay
// for one. The dashboard counts leases down locally, so without news it would show a live
// session running out. Every RENEWAL_SCAN_MS, while a dashboard is open, this scan looks at the
// locks held with a sliding lease and names those whose holder was renewed by at least
// MIN_NEWS_MS since it was last reported: at most two updates a second per session, nothing at
// all with no dashboard open. A shown countdown trails the truth by at most a scan and a flush.
//
// Which locks have a sliding holder is learnt from grant events (`noteGrant`), and, for the
// holders granted before the first dashboard opened, from one walk of the table done in slices
// of SEED_SLICE locks per scan: a full walk of 100,000 locks at once held the loop for tens of
// milliseconds every 300 ms, on the lock path's time.
import type { Claim, LockState } from '../../lib/engine/claim.ts';

/** How often the scan runs (rounded to whole flushes). */
export const RENEWAL_SCAN_MS = 300;
/** Locks of the first walk looked at per scan. */
export const SEED_SLICE = 2_000;

/** A renewal smaller than this is not worth a message (the countdown is that close). */
const MIN_NEWS_MS = 500;

export class RenewalScan {
  /** The lease end each sliding holder had when it was last reported (or first seen). */
  private reported = new WeakMap<Claim, number>();
  /** Locks that had a sliding holder when last seen. */
  private readonly sliding = new Set<string>();
  private seed: Iterator<LockState> | null = null;

  /** Forget everything; `locks` is walked (a slice per scan) for sliding holders already there. */
  reset(locks?: Iterator<LockState>): void {
    this.reported = new WeakMap();
    this.sliding.clear();
    this.seed = locks ?? null;
  }

  /** A grant with a sliding lease: its lock is watched from now on. */
  noteGrant(lock: string): void {
    this.sliding.add(lock);
  }

  /** Calls `renewed(name)` for each lock whose sliding holder's lease moved on since last time. */
  scan(lookup: (name: string) => LockState | undefined, renewed: (name: string) => void): void {
    if (this.seed !== null) {
      for (let i = 0; i < SEED_SLICE; i++) {
        const next = this.seed.next();
        if (next.done === true) {
          this.seed = null;
          break;
        }
        if (next.value.holder?.sliding === true) this.sliding.add(next.value.name);
      }
    }
    for (const name of this.sliding) {
      const holder = lookup(name)?.holder;
      if (holder === null || holder === undefined || !holder.sliding) {
        this.sliding.delete(name);
        continue;
      }
      const last = this.reported.get(holder);
      if (last === undefined) {
        // Granted since the last scan: the grant event already reported it.
        this.reported.set(holder, holder.expiresAt);
      } else if (holder.expiresAt - last >= Math.min(MIN_NEWS_MS, holder.leaseMs / 4)) {
        this.reported.set(holder, holder.expiresAt);
        renewed(name);
      }
    }
  }
}
