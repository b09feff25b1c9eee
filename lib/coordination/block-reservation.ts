// Token blocks reserved in etcd by compare-and-swap (issue 32): one key holds the cluster's token
// ceiling, the highest token any active may have issued from; a node takes the block above it by
// a transaction that writes the new ceiling only if the key is still at the revision it read.
// Pure: what to ask etcd and how to judge its answer. server/coordination/etcd-block-reserver.ts
// sends it.
//
// Why this gives unique, increasing tokens across every active ever elected. Each successful
// swap moves the ceiling from exactly the value it read to a higher one, and etcd applies the
// swaps one after another (linearizably), so the blocks won are the disjoint intervals between
// consecutive ceilings, each above every block won before it. A swap that lost (someone else moved
// the key first) wins nothing: its block is not used, and the node tries again above the value the
// failed transaction read back in the same round trip. A swap whose answer was lost (a timeout)
// may have been applied: the node does not use that block either, and the retry reads a ceiling
// above it, so at worst a block is skipped, never issued twice. A node's own floor (the highest
// token it issued or heard of) only ever raises the start.
import { MAX_TOKEN, TokensUnavailable } from '../tokens/token-contract.ts';

/** The ceiling key as read: its value and etcd's mod revision (0n: the key does not exist yet). */
export interface CeilingRead {
  readonly ceiling: bigint;
  readonly modRevision: bigint;
}

export const ABSENT: CeilingRead = { ceiling: 0n, modRevision: 0n };

export interface Block {
  /** The first and last token of the block, both issued from it. */
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * The transaction: if the ceiling key's mod revision is still `expectModRevision` (0n matches a key
 * that does not exist: etcd compares a missing key's revisions as 0) and, when `roleGuard` is
 * given, the role key is still held under that lease, write `newCeiling`; otherwise read the key
 * back. The block is this node's only if the transaction succeeded.
 */
export interface ReservationRequest {
  readonly expectModRevision: bigint;
  readonly newCeiling: bigint;
  readonly block: Block;
  readonly roleGuard: RoleGuard | undefined;
}

/** Only the holder of the active role may reserve: the role key must still carry its lease. */
export interface RoleGuard {
  readonly lease: bigint;
}

export type ReservationReply =
  | { readonly succeeded: true }
  /** The compare failed: what the failure branch read back (the role too, when guarded). */
  | { readonly succeeded: false; readonly current: CeilingRead; readonly roleLease: bigint | null };

export type Judgement =
  | { readonly kind: 'reserved'; readonly block: Block }
  /** Someone else moved the ceiling: try again above what was read back. */
  | { readonly kind: 'retry'; readonly read: CeilingRead }
  /** The role key no longer carries this node's lease: it is not the active, and must not issue. */
  | { readonly kind: 'not-holder' };

/** A TokensUnavailable 'tokens-exhausted': a token source that takes its blocks from etcd says so to the engine. */
export class TokensExhausted extends TokensUnavailable {
  constructor() {
    super('tokens-exhausted');
    this.message = 'fencing tokens exhausted (u64): no block fits above the etcd ceiling';
    this.name = 'TokensExhausted';
  }
}

/** The ceiling's text in etcd: a decimal u64, nothing else. */
export function parseCeiling(text: string): bigint {
  if (!/^(0|[1-9][0-9]{0,19})$/.test(text)) throw new Error(`etcd token ceiling is not a decimal u64: ${JSON.stringify(text.slice(0, 40))}`);
  const value = BigInt(text);
  if (value > MAX_TOKEN) throw new Error(`etcd token ceiling is past 2^64-1: ${text}`);
  return value;
}

export function encodeCeiling(ceiling: bigint): string {
  return ceiling.toString(10);
}

/**
 * The swap that takes the next `size` tokens above both the ceiling read and this node's `floor`
 * (the highest token it has issued or heard of: tokens must rise even past a ceiling key that was
 * lost or reset). Throws TokensExhausted when no block fits below 2^64.
 */
export function reservationRequest(read: CeilingRead, size: bigint, floor = 0n, roleGuard?: RoleGuard): ReservationRequest {
  if (size <= 0n) throw new Error(`block size must be positive, not ${size}`);
  const start = read.ceiling > floor ? read.ceiling : floor;
  const last = start + size;
  if (last > MAX_TOKEN) throw new TokensExhausted();
  return { expectModRevision: read.modRevision, newCeiling: last, block: { first: start + 1n, last }, roleGuard };
}

/** What etcd's answer means for the request. */
export function judgeReply(request: ReservationRequest, reply: ReservationReply): Judgement {
  if (reply.succeeded) return { kind: 'reserved', block: request.block };
  if (request.roleGuard !== undefined && reply.roleLease !== request.roleGuard.lease) return { kind: 'not-holder' };
  // Nobody can move a ceiling down through this protocol; a lower one read back means the key was
  // deleted or rewritten by hand, and reservationRequest's floor keeps the next block above ours.
  return { kind: 'retry', read: reply.current };
}
