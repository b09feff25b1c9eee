// The compact side of a standby's replica operations (replica-ops.ts): a keyed grant the active
// reports on a lock nobody waits for here becomes a compact holder (compact-holders.ts), so a
// standby's table of millions is rows of columns as the active's is, and its end parks the row.
import type { ClaimOwner } from './claim.ts';
import type { LockTable } from './lock-table.ts';
import { replicaEndEvent, replicaGrantEvent } from './replica-events.ts';
import type { ReplicaGrant, ReplicaHolderEnd } from './replica-types.ts';

/** replicaGrant of a keyed grant (fixed lease, no claim key) on `g.lock`, which has no lock object. */
export function replicaCompactGrant(table: LockTable, g: ReplicaGrant, owner: ClaimOwner, now: number, emit: boolean): void {
  const compact = table.compact;
  const entry = table.locks.get(g.lock) as number | undefined;
  let slot: number;
  if (entry === undefined) slot = table.addCompact(g.lock);
  else {
    slot = entry;
    if (compact.parkPosOf(slot) >= 0) table.unparkCompact(slot);
    else if (compact.idOf(slot) !== 0) {
      // A different holder still in place (a missed event) ends silently first.
      compact.unhold(slot);
      table.held--;
    }
  }
  const clientName = g.clientName ?? null;
  compact.hold(slot, g.claimId, g.token, now - g.heldForMs, g.leaseMs, owner, g.client, clientName, now + g.remainingMs);
  table.held++;
  if (emit && table.listeners.length > 0) {
    table.emit(replicaGrantEvent(g, now, clientName, 0));
  }
}

/** replicaEndHolder of compact slot `slot`: ended, the slot parked, then its event (the object form's order). */
export function replicaCompactEnd(table: LockTable, slot: number, claimId: number, how: ReplicaHolderEnd, now: number, emit: boolean): boolean {
  const compact = table.compact;
  if (compact.idOf(slot) !== claimId) return false;
  const holder = emit && table.listeners.length > 0 ? compact.view(slot) : null;
  compact.unhold(slot);
  table.held--;
  table.parkCompactIfIdle(slot);
  if (holder !== null) table.emit(replicaEndEvent(holder, how, now));
  return true;
}
