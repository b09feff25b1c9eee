// The lock mutations of the ops API as they run on the active node's engine: force-release a
// holder, kick a waiter. The op arrives checked (admin-request.ts: parsed once where it entered
// the process), so nothing here reads text. Results are JSON-safe AdminResults, tokens written
// as text, because an op may have come over a peer link from a standby and its result goes back
// the same way.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import type { LockName, LockOp } from '../../lib/ops-api/admin-request.ts';
import { releaseClientLocally } from './client-release.ts';
import { clientText, holderView, type ViewClock } from '../lock-views/lock-views.ts';

/** Ends the holder of `lock` (only the one holding `token` when given) and hands the lock on. */
export function forceReleaseLocally(engine: LockEngine, clock: ViewClock, lock: LockName, token: bigint | null): AdminResult {
  const result = engine.forceRelease(lock, token ?? undefined);
  if (!result.ok) {
    if (result.reason === 'not-held') return { ok: false, error: 'not-found', detail: `nobody holds ${lock}` };
    return { ok: false, error: 'stale-token', detail: `token ${String(token)} does not hold ${lock}; the holder's token is ${String(result.holderToken)}` };
  }
  const next = engine.lock(lock)?.holder ?? null;
  const { claim } = result;
  return {
    ok: true,
    body: {
      released: { name: lock, token: result.token.toString(), protocol: claim.protocol, client: claim.client, clientName: claim.clientName },
      nextHolder: next === null ? null : holderView(next, clock),
    },
    detail: `token ${result.token} held by ${clientText(claim.clientName, claim.client, claim.protocol)}${next === null ? '' : `; now token ${next.token}`}`,
  };
}

/** Removes waiter `claimId` from the queue of `lock`. */
export function kickLocally(engine: LockEngine, lock: LockName, claimId: number): AdminResult {
  // Who it was, read before the kick: the audit entry names the waiter's client.
  let waiter = engine.lock(lock)?.head ?? null;
  while (waiter !== null && waiter.id !== claimId) waiter = waiter.next;
  const who = waiter === null ? '' : ` of ${clientText(waiter.clientName, waiter.client, waiter.protocol)}`;
  if (!engine.kick(lock, claimId)) return { ok: false, error: 'not-found', detail: `no waiter ${claimId} in the queue of ${lock}` };
  return { ok: true, body: { kicked: { name: lock, id: String(claimId) } }, detail: `waiter ${claimId}${who}` };
}

/** How the cluster side (single-node-cluster.ts, or the peer runtime on the active node) runs a lock op here. */
export interface LocalLockOps {
  /**
   * `stopReason`: asked between the slices of a bulk release (client-release.ts); a reason
   * stops it there (the node is no longer the one to change its engine). Null: never stop.
   */
  run(op: LockOp, stopReason?: () => string | null): Promise<AdminResult>;
}

/**
 * The one door from an admin op to this node's engine, whichever way the op came (this node's
 * API, or a standby's forwarded over the peer link). An op that changed the engine may have
 * moved its next deadline (a new holder's lease, a waiter's deadline gone), so the daemon's
 * one engine timer is re-armed here, and only here (a bulk release: after each slice). A
 * refused op changed nothing.
 */
export function localLockOps(engine: LockEngine, clock: ViewClock, wake: () => void): LocalLockOps {
  return {
    async run(op, stopReason = () => null) {
      if (op.op === 'release-client') return releaseClientLocally(engine, op.client, op.tokens, { wake, stopReason });
      const result = op.op === 'force-release' ? forceReleaseLocally(engine, clock, op.lock, op.token) : kickLocally(engine, op.lock, op.claimId);
      if (result.ok) wake();
      return result;
    },
  };
}
