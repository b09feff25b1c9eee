// Which token blocks a node may reserve. Tokens are issued from blocks of `size` tokens: block k
// holds tokens k*size+1 to (k+1)*size. In a cluster, block k belongs to the node in slot
// k mod TOKEN_SLOTS (its place in cluster.json), and a node reserves only blocks of its own
// slot. Two nodes that act as active at the same time (a partition: no quorum decides) then
// never issue the same token, whatever blocks either reserved before, however long it lasts.
// Tokens stay strictly increasing on each node; across nodes they are ordered by the usual
// floors (a promotion starts above everything it heard of).
//
// The stride is fixed (not the node count), so adding a node at the end of the list moves no
// other node's slot; the price is that one node's tokens skip the other slots' blocks
// (TOKEN_SLOTS times the token space: at 1,000,000 grants/s a node needs 9,000 years of u64).

import { MAX_TOKEN } from './token-contract.ts';

/** The most nodes a cluster may list: one token slot each. */
export const TOKEN_SLOTS = 64;

export interface TokenSlots {
  /** This node's slot: 0 to count-1. */
  slot: number;
  /** How many slots share the token space. */
  count: number;
}

/** A daemon without a cluster owns every block. */
export const SINGLE_SLOT: TokenSlots = { slot: 0, count: 1 };

/** The slots of the node at `index` in a cluster's peer list. */
export function clusterSlot(index: number): TokenSlots {
  return { slot: index, count: TOKEN_SLOTS };
}

/** Tokens (start, end]: above `start`, up to and including `end`, all in one block. */
export interface BlockRange {
  start: bigint;
  end: bigint;
}

export function checkSlots(slots: TokenSlots): void {
  if (!Number.isInteger(slots.count) || slots.count < 1 || !Number.isInteger(slots.slot) || slots.slot < 0 || slots.slot >= slots.count) {
    throw new RangeError(`token slot ${slots.slot} of ${slots.count} is not valid`);
  }
}

/** The owner of the block that `token` belongs to. */
export function slotOfToken(token: bigint, size: bigint, count: number): number {
  return Number(((token - 1n) / size) % BigInt(count));
}

/**
 * The tokens above `after` in the first block of `slots` that has any: the rest of the block
 * holding after+1 when it is the slot's, else the whole next block of the slot. Null when the
 * slot has no token left below u64's top.
 */
export function slotRangeAbove(after: bigint, size: bigint, slots: TokenSlots): BlockRange | null {
  if (after >= MAX_TOKEN) return null;
  const count = BigInt(slots.count);
  const slot = BigInt(slots.slot);
  let block = after / size; // the block holding after+1
  let start = after;
  const skip = (slot - (block % count) + count) % count;
  if (skip !== 0n) {
    block += skip;
    start = block * size;
    if (start >= MAX_TOKEN) return null;
  }
  const top = (block + 1n) * size;
  return { start, end: top > MAX_TOKEN ? MAX_TOKEN : top };
}

/**
 * How many tokens above `after` the blocks of `slots` still hold, up to `top` (u64's top; a
 * test passes a small one to count by hand): what a node can still issue before its slot is used
 * up. O(1): whole blocks of the slot are counted by division, then the used part of the first
 * one and the part of the last one above `top` are taken off.
 */
export function slotTokensAbove(after: bigint, size: bigint, slots: TokenSlots, top: bigint = MAX_TOKEN): bigint {
  if (after >= top) return 0n;
  const count = BigInt(slots.count);
  const slot = BigInt(slots.slot);
  const blockOf = (token: bigint) => (token - 1n) / size;
  const owned = (block: bigint) => block % count === slot;
  /** The slot's blocks among 0..block. */
  const upTo = (block: bigint) => (block < slot ? 0n : (block - slot) / count + 1n);
  const first = blockOf(after + 1n);
  const last = blockOf(top);
  let n = (upTo(last) - (first === 0n ? 0n : upTo(first - 1n))) * size;
  if (owned(first)) n -= after - first * size;
  if (owned(last)) n -= (last + 1n) * size - top;
  return n;
}
