// The entries of a streamed snapshot, checked by hand: a part carries thousands of them, and
// a zod tuple per entry cost the standby more than applying them. One place says what a holder
// and a waiter are on the wire; the encoding is in server/cluster/snapshot-walk.ts and the
// reading in replication-sink.ts. A new field goes at the end of its tuple, in all three.
import type { Protocol } from '../ops-api/api-types.ts';
import { isValidClientName } from '../protocol/client-name.ts';
import { isU64Text } from '../protocol/u64-text.ts';

/**
 * Holder in a snapshot: [lock, claimId, token, protocol, client, leaseMs, sliding, remainingMs, heldForMs, keyHash?, clientName?]
 * (keyHash: SHA-256 hex of a resumable session's claim key, null or absent otherwise; clientName:
 * the identity the client gave, absent when none, and then keyHash is absent too when null).
 */
export type SnapshotHolder = [string, number, string, Protocol, string, number, boolean, number, number, (string | null)?, string?];
/** Waiter in a snapshot, in queue order: [lock, claimId, protocol, client, leaseMs, sliding, waitingForMs, waitRemainingMs, keyHash?, clientName?]. */
export type SnapshotWaiter = [string, number, Protocol, string, number, boolean, number, number | null, (string | null)?, string?];

/** A claim key's SHA-256, as lower-case hex. */
export const KEY_HASH = /^[0-9a-f]{64}$/;
const isKeyHash = (v: unknown): boolean => typeof v === 'string' && KEY_HASH.test(v);
/** The two optional tail fields from `at` on: [keyHash], or [keyHash or null, clientName]. */
function isTail(v: unknown[], at: number): boolean {
  if (v.length === at) return true;
  if (v.length === at + 1) return isKeyHash(v[at]);
  const name = v[at + 1];
  return v.length === at + 2 && (v[at] === null || isKeyHash(v[at])) && typeof name === 'string' && isValidClientName(name);
}

/** A u64 in decimal (lib/protocol/u64-text.ts). */
export const isDecimalU64 = isU64Text;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isProtocol = (v: unknown): v is Protocol => v === 'keyed' || v === 'session';

export function isSnapshotHolder(v: unknown): v is SnapshotHolder {
  return (
    Array.isArray(v) &&
    isTail(v, 9) &&
    typeof v[0] === 'string' &&
    isNumber(v[1]) &&
    isDecimalU64(v[2]) &&
    isProtocol(v[3]) &&
    typeof v[4] === 'string' &&
    isNumber(v[5]) &&
    typeof v[6] === 'boolean' &&
    isNumber(v[7]) &&
    isNumber(v[8])
  );
}

export function isSnapshotWaiter(v: unknown): v is SnapshotWaiter {
  return (
    Array.isArray(v) &&
    isTail(v, 8) &&
    typeof v[0] === 'string' &&
    isNumber(v[1]) &&
    isProtocol(v[2]) &&
    typeof v[3] === 'string' &&
    isNumber(v[4]) &&
    typeof v[5] === 'boolean' &&
    isNumber(v[6]) &&
    (v[7] === null || isNumber(v[7]))
  );
}

export const isSnapshotHolders = (v: unknown): v is SnapshotHolder[] => Array.isArray(v) && v.every(isSnapshotHolder);
export const isSnapshotWaiters = (v: unknown): v is SnapshotWaiter[] => Array.isArray(v) && v.every(isSnapshotWaiter);
