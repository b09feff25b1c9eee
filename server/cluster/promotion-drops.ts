// What a promotion ends: waiters and session claims end with the node that had them (their
// clients re-send or reconnect); resumable session claims (holders and waiters that sent a
// claim key) stay, owned by `carried`, for their clients to RESUME within their lease.
import type { Claim, LockState } from '../../lib/engine/claim.ts';
import type { CarriedClaims } from '../../lib/engine/carried-claims.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

/**
 * Ends the claims that cannot move. The caller holds handovers: a lock freed here goes to its
 * next waiter only once this node has its token floor. `candidates` (stream-claims.ts) names
 * every lock with a waiter or a session holder, when the replication sink knows them: then only
 * those are visited instead of the whole table. If they miss a waiter the engine counts (they
 * never should), the whole table is walked after all.
 */
export function dropUnreplicable(
  engine: LockEngine,
  carried: CarriedClaims | null = null,
  candidates: ReadonlySet<string> | null = null,
): { waiters: number; sessions: number } {
  const waiters: Claim[] = [];
  const sessions: Claim[] = [];
  if (carried !== null) carried.carried = engine.keepDetached(carried);
  const visit = (lock: LockState): number => {
    let seen = 0;
    for (let w = lock.head; w !== null; w = w.next) {
      seen++;
      if (w.owner !== carried) waiters.push(w);
    }
    if (lock.holder !== null && lock.holder.protocol === 'session' && lock.holder.owner !== carried) sessions.push(lock.holder);
    return seen;
  };
  let seen = 0;
  if (candidates !== null) {
    for (const name of candidates) {
      const lock = engine.lock(name);
      if (lock !== undefined) seen += visit(lock);
    }
  }
  if (candidates === null || seen !== engine.waiterCount) {
    waiters.length = 0;
    sessions.length = 0;
    for (const lock of engine.allLocks()) visit(lock);
  }
  for (const w of waiters) engine.end(w);
  for (const h of sessions) engine.end(h);
  return { waiters: waiters.length, sessions: sessions.length };
}
