// The lock mutations of the ops API as they run on the active node's engine: force-release a
// holder, kick a waiter. They return JSON-safe AdminResults because the op may have come over
// a peer link from a standby's HTTP API and its result goes back the same way. The caller
// wakes the daemon's timer afterwards (a new holder's lease, a waiter's deadline gone).
import { ERRORS, type ErrorName } from '../../lib/errors.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { isValidKey } from '../../lib/protocol/key-rules.ts';
import { parseU64Text } from '../../lib/protocol/u64-text.ts';
import type { AdminOp, AdminResult } from '../daemon/daemon-facade.ts';
import { holderView, type ViewClock } from './lock-views.ts';

/**
 * The HTTP handler checks these already; an op from a peer link is checked again, so a peer
 * of another version cannot put a malformed name or token into the engine.
 */
function badName(lock: string): AdminResult | null {
  return isValidKey(lock) ? null : { ok: false, error: 'invalid-input', detail: `name: ${ERRORS['bad-key'].message}` };
}

function parseToken(token: string | null): bigint | undefined | null {
  if (token === null) return undefined;
  return parseU64Text(token);
}

/** Ends the holder of `lock` (only the one holding `token` when given) and hands the lock on. */
export function forceReleaseLocally(engine: LockEngine, clock: ViewClock, lock: string, token: string | null): AdminResult {
  const refused = badName(lock);
  if (refused !== null) return refused;
  const parsed = parseToken(token);
  if (parsed === null) return { ok: false, error: 'invalid-input', detail: 'token: expected a decimal u64 string' };
  const result = engine.forceRelease(lock, parsed);
  if (!result.ok) {
    if (result.reason === 'not-held') return { ok: false, error: 'not-found', detail: `nobody holds ${lock}` };
    return { ok: false, error: 'stale-token', detail: `token ${String(parsed)} does not hold ${lock}; the holder's token is ${String(result.holderToken)}` };
  }
  const next = engine.lock(lock)?.holder ?? null;
  const { claim } = result;
  return {
    ok: true,
    body: {
      released: { name: lock, token: result.token.toString(), protocol: claim.protocol, client: claim.client },
      nextHolder: next === null ? null : holderView(next, clock),
    },
    detail: `token ${result.token} held by ${claim.client} (${claim.protocol})${next === null ? '' : `; now token ${next.token}`}`,
  };
}

/** Removes waiter `claimId` from the queue of `lock`. */
export function kickLocally(engine: LockEngine, lock: string, claimId: number): AdminResult {
  const refused = badName(lock);
  if (refused !== null) return refused;
  if (!Number.isSafeInteger(claimId) || claimId < 1) return { ok: false, error: 'invalid-input', detail: 'id: expected a decimal claim id' };
  if (!engine.kick(lock, claimId)) return { ok: false, error: 'not-found', detail: `no waiter ${claimId} in the queue of ${lock}` };
  return { ok: true, body: { kicked: { name: lock, id: String(claimId) } }, detail: `waiter ${claimId}` };
}

/** The ops on one lock; handoff and restore belong to the cluster. */
export type LockOp = Extract<AdminOp, { op: 'force-release' | 'kick' }>;

/** Runs a lock op on this node's engine. */
export function runLockOpLocally(engine: LockEngine, clock: ViewClock, op: LockOp): AdminResult {
  return op.op === 'force-release' ? forceReleaseLocally(engine, clock, op.lock, op.token) : kickLocally(engine, op.lock, op.claimId);
}

/** What an op's audit entry names as its target, on the node that took the request and on the active node alike. */
export function auditTarget(op: AdminOp): string {
  switch (op.op) {
    case 'force-release':
    case 'kick':
      return op.lock;
    case 'handoff':
      return op.target ?? 'any standby';
    case 'restore':
      return op.node ?? 'every yielded node';
  }
}

/**
 * A result that crossed a peer link names its error as a string; one this build does not know
 * (a peer of a newer version) becomes `internal`, so the HTTP answer still has a status.
 */
export function knownError(error: string): ErrorName {
  return Object.hasOwn(ERRORS, error) ? (error as ErrorName) : 'internal';
}
