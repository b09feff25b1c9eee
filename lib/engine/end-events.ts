// The events that end a holder (release, expire, force-release), built from the claim in one
// place for the engine and its replica operations. Each is one object literal, as the engine's
// other events: no spread and no second object on the path of a release.
import type { Claim } from './claim.ts';
import type { EndedHolder, ExpireEvent, ForceReleaseEvent, ReleaseEvent } from './events.ts';

/** What an end event says of the holder it ended (a reset lists these too). */
export function endedHolder(holder: Claim, at: number): EndedHolder {
  return {
    at,
    lock: holder.name,
    claimId: holder.id,
    token: holder.token,
    protocol: holder.protocol,
    client: holder.client,
    clientName: holder.clientName,
    grantedAt: holder.grantedAt,
    waitedMs: holder.grantedAt - holder.enqueuedAt,
  };
}

export function releaseEvent(holder: Claim, at: number, cause: ReleaseEvent['cause']): ReleaseEvent {
  return {
    type: 'release',
    at,
    lock: holder.name,
    claimId: holder.id,
    token: holder.token,
    protocol: holder.protocol,
    client: holder.client,
    clientName: holder.clientName,
    grantedAt: holder.grantedAt,
    waitedMs: holder.grantedAt - holder.enqueuedAt,
    cause,
  };
}

/** `lastAliveAt`: lease end minus lease, the holder's last heartbeat (sliding) or its grant (fixed). */
export function expireEvent(holder: Claim, at: number): ExpireEvent {
  return {
    type: 'expire',
    at,
    lock: holder.name,
    claimId: holder.id,
    token: holder.token,
    protocol: holder.protocol,
    client: holder.client,
    clientName: holder.clientName,
    grantedAt: holder.grantedAt,
    waitedMs: holder.grantedAt - holder.enqueuedAt,
    lastAliveAt: holder.expiresAt - holder.leaseMs,
  };
}

export function forceReleaseEvent(holder: Claim, at: number): ForceReleaseEvent {
  return {
    type: 'force-release',
    at,
    lock: holder.name,
    claimId: holder.id,
    token: holder.token,
    protocol: holder.protocol,
    client: holder.client,
    clientName: holder.clientName,
    grantedAt: holder.grantedAt,
    waitedMs: holder.grantedAt - holder.enqueuedAt,
  };
}
