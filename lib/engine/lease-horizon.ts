// The latest lease end among a table's holders: how long a client told it holds a lock may go on
// believing so. The etcd mode's clean stop (docs/cluster.md "Stopping the whole cluster") keeps
// every node from taking the role until then, so a cluster restarted with empty tables never
// grants a lock whose old holder may still be working under it.
//
// Read once, at shutdown, after the protocols have drained. The compact holders' lease ends are
// read from their deadline columns, not through a claim view per lock: at 5,000,000 held keyed
// locks a walk of allLocks() took 4.9 to 5.1 s, the columns 11 to 13 ms. The object-form locks
// (those with a queue, sessions) are walked.
import type { LockState } from './claim.ts';
import type { SlotDeadlines } from './slot-deadlines.ts';

/** The latest lease end (the engine's clock, ms) of any holder; -Infinity when none holds. */
export function latestLeaseEnd(compactDeadlines: Pick<SlotDeadlines, 'latestDue'>, objectLocks: Iterable<LockState>): number {
  let latest = compactDeadlines.latestDue();
  for (const lock of objectLocks) {
    const holder = lock.holder;
    if (holder === null) continue;
    // expiresAt is set at every grant and moved by every renewal; a claim without one (never
    // expected) counts from its grant, so it is never left out.
    const end = Number.isFinite(holder.expiresAt) ? holder.expiresAt : holder.grantedAt + holder.leaseMs;
    if (end > latest) latest = end;
  }
  return latest;
}
