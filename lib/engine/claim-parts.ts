// The parts of a claim kept out of the Claim object (claim.ts), which every held lock has: only
// fields that every claim needs are its own (issue 29: on Node 20 every tagged field is 8 bytes
// and every time in a field a 16-byte box). A claim's WaitLinks are made when it first waits (and
// kept once granted, for its enqueue time); its ClaimExtra when it has a rare field. Also how its
// small fields are packed into one integer. Nothing here imports claim.ts (which imports this).

export type Protocol = 'keyed' | 'session';
export type ClaimState = 'waiting' | 'holding' | 'ended';
export type HandoverCause = 'release' | 'disconnect' | 'expiry' | 'force-release';

/** Why the engine (not the owner) ended a claim. */
export type EndReason = 'wait-timeout' | 'expired' | 'force-released' | 'kicked';

// Claim.bits: the state (0 waiting, 1 holding, 2 ended), the protocol and the yes/no fields in
// one small integer (one field of 8 bytes instead of four).
export const STATE_MASK = 3;
export const SESSION = 4;
export const SLIDING = 8;
export const RENEW_QUEUED = 16;
export const GRANTED = 32;
export const STATE_NAMES: readonly ClaimState[] = ['waiting', 'holding', 'ended'];

/** What the queue needs of a claim: its WaitLinks once it waits. */
export interface Queued<C extends Queued<C>> {
  links: WaitLinks<C> | null;
}

/** Rare fields of a claim (claim.ts), in one object made only for the claims that have one. */
export class ClaimExtra {
  keyHash: string | null = null;
  clientName: string | null = null;
  tag = 0;
}

/** A claim's place in its lock's queue, and when it asked (made at its first wait). */
export class WaitLinks<Claim> {
  /** Enqueue order within the lock, for queue positions. */
  seq = 0;
  prev: Claim | null = null;
  next: Claim | null = null;
  /** Absolute wait deadline while queued; +Infinity waits forever. */
  waitDeadline = Number.POSITIVE_INFINITY;

  constructor(readonly enqueuedAt: number) {}
}
