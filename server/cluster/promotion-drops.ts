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
export function dropUnreplicable(engine: LockEngine, carried: CarriedClaims | null = null, candidates: ReadonlySet<string> | null = null): DroppedClaims {
  const waiters: Claim[] = [];
  const sessions: Claim[] = [];
  let carriedHolders = 0;
  if (carried !== null) carried.carried = engine.keepDetached(carried);
  const visit = (lock: LockState): number => {
    let seen = 0;
    for (let w = lock.head; w !== null; w = w.next) {
      seen++;
      if (w.owner !== carried) waiters.push(w);
    }
    if (lock.holder !== null && lock.holder.protocol === 'session') {
      if (lock.holder.owner !== carried) sessions.push(lock.holder);
      else carriedHolders++;
    }
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
    carriedHolders = 0;
    for (const lock of engine.allLocks()) visit(lock);
  }
  // Counted before the ends: a claim's lock is gone from the table once its last claim ends.
  const keyedWaiters = new Map<string, number>();
  let sessionWaiters = 0;
  for (const w of waiters) {
    if (w.protocol === 'keyed') keyedWaiters.set(w.lock.name, (keyedWaiters.get(w.lock.name) ?? 0) + 1);
    else sessionWaiters++;
  }
  for (const w of waiters) engine.end(w);
  for (const h of sessions) engine.end(h);
  // Handovers are held: every holder left is a keyed one or a kept session claim.
  const keyedHolders = engine.heldCount - carriedHolders;
  return { waiters: waiters.length, sessions: sessions.length, keyedWaiters, sessionWaiters, keyedHolders };
}

/** What dropUnreplicable ended, for the log and the failover timeline's client figures. */
export interface DroppedClaims {
  waiters: number;
  /** Session holders ended (no claim key, or over --max-parked). */
  sessions: number;
  /** The keyed waiters ended, counted by lock: their clients re-send the request to this node. */
  keyedWaiters: Map<string, number>;
  /** Session waiters ended (no claim key, or over --max-parked). */
  sessionWaiters: number;
  /** Keyed grants left held (they go on at this node with their lease). */
  keyedHolders: number;
}
