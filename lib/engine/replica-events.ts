// The events a standby's replica operations emit, built in one place for both forms of a holder
// (objects in replica-ops.ts, compact rows in replica-compact.ts), so the two cannot drift apart
// (the compact-holders property test holds them to the same events).
import type { Claim } from './claim.ts';
import { expireEvent, forceReleaseEvent, releaseEvent } from './end-events.ts';
import type { GrantEvent, LockEvent } from './events.ts';
import type { ReplicaGrant, ReplicaHolderEnd } from './replica-types.ts';

/** The grant event of a replicated grant `g`, seen here at `now`, having waited `waitedMs`. */
export function replicaGrantEvent(g: ReplicaGrant, now: number, clientName: string | null, waitedMs: number): GrantEvent {
  return {
    type: 'grant',
    at: now,
    lock: g.lock,
    claimId: g.claimId,
    token: g.token,
    protocol: g.protocol,
    client: g.client,
    clientName,
    leaseMs: g.leaseMs,
    sliding: g.sliding,
    waitedMs,
    handoverMs: g.handoverMs,
    handoverCause: g.handoverCause,
  };
}

/** The end event of `holder`, which the active reports ended `how` at `now`. */
export function replicaEndEvent(holder: Claim, how: ReplicaHolderEnd, now: number): LockEvent {
  if (how === 'release' || how === 'disconnect') return releaseEvent(holder, now, how);
  if (how === 'force-release') return forceReleaseEvent(holder, now);
  // The active expired it now, a lease after its last sign of life; a sliding lease's heartbeats
  // are not replicated, so the lease end this node has may be stale.
  if (holder.expiresAt < now) holder.expiresAt = now;
  return expireEvent(holder, now);
}
