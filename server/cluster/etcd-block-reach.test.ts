// `--etcd-token-block`'s top (lib/cluster/cluster-config.ts, MAX_ETCD_TOKEN_BLOCK) against the
// standbys' ceiling guard (ceiling-guard.ts): a standby judges every replicated grant against
// the guard's limit (peer-message-handler.ts, applyBatch) and re-syncs when a token is above it.
// Inside one active's term the etcd blocks follow each other, and a token jumps only where a
// block was skipped: a compare-and-swap whose answer was lost may have moved the ceiling, and
// the reserver takes the block above it. The blocks here come from the real reservation rule.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ETCD_TOKEN_BLOCK, MAX_ETCD_TOKEN_BLOCK } from '../../lib/cluster/cluster-config.ts';
import { type CeilingRead, reservationRequest } from '../../lib/coordination/block-reservation.ts';
import { CEILING_SLACK, CeilingGuard } from './ceiling-guard.ts';

/**
 * The first token of the block an active enters after spending the one in use, when the answers
 * of `lost` compare-and-swaps before it were lost (each applied in etcd, its block never used);
 * and the last token of the block in use, the highest a standby has seen then.
 */
function jumpAfter(size: number, lost: number): { lastSeen: bigint; next: bigint } {
  const block = BigInt(size);
  // Some way into the term: the block in use was taken above a ceiling etcd already held.
  let read: CeilingRead = { ceiling: 7n * block + 12_345n, modRevision: 40n };
  const inUse = reservationRequest(read, block, 0n).block;
  read = { ceiling: inUse.last, modRevision: 41n };
  for (let i = 0; i < lost; i++) {
    const skipped = reservationRequest(read, block, inUse.last);
    read = { ceiling: skipped.newCeiling, modRevision: read.modRevision + 1n };
  }
  const next = reservationRequest(read, block, inUse.last).block;
  return { lastSeen: inUse.last, next: next.first };
}

/** A standby's guard that has seen tokens up to `lastSeen` (from the active's stream). */
function standbyGuard(lastSeen: bigint): CeilingGuard {
  return new CeilingGuard({ own: () => lastSeen, now: () => 0, logger: pino({ level: 'silent' }) });
}

const admitted = (size: number, lost: number): boolean => {
  const { lastSeen, next } = jumpAfter(size, lost);
  return next <= standbyGuard(lastSeen).limit();
};

describe('the etcd token block and the ceiling guard', () => {
  it('with the largest block a standby takes the next block’s tokens, across two skipped blocks in a row', () => {
    for (const lost of [0, 1, 2]) expect(admitted(MAX_ETCD_TOKEN_BLOCK, lost), `${lost} skipped`).toBe(true);
  });

  it('the default block leaves room for six skipped blocks in a row', () => {
    expect(admitted(DEFAULT_ETCD_TOKEN_BLOCK, 6)).toBe(true);
    expect(admitted(DEFAULT_ETCD_TOKEN_BLOCK, 7)).toBe(false);
  });

  it('a block of the guard’s whole reach would be refused after one skipped block: why the flag stops below half of it', () => {
    expect(admitted(Number(CEILING_SLACK), 1)).toBe(false);
    expect(BigInt(MAX_ETCD_TOKEN_BLOCK) * 2n + 1n).toBeLessThanOrEqual(CEILING_SLACK);
  });
});
