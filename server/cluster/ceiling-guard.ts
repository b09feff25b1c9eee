// The bound on token ceilings a peer can make this node act on. A ceiling from a peer raises
// this node's token floor (an active skips to above it; a standby promotes above it), and a
// floor near the top of u64 ends the token sequence for good: the node exits on its next grant,
// and every data dir the value reaches does the same on every restart. So a peer's ceiling is
// only obeyed when it is at most one reservation's reach (CEILING_SLACK) above anything this
// node has seen itself (its own tokens and stored ceilings, and what it took from the active it
// follows): in the protocol a ceiling moves by at most that per reservation. Checked where a value would raise the
// floor or be stored, not where it is heard: a heartbeat's ceiling is only judged if a promotion
// would use it, so a standby that comes back many blocks behind its active (and catches up from
// the active's snapshot) logs nothing.
//
// The snapshot of the active a node follows, which it asked for, is taken as it is (`adopt`): it
// is the node's history from then on. A node that was down for a while is any number of blocks
// behind, and refusing would make it promote below the cluster's tokens.
import type { Logger } from 'pino';
import { TOKEN_SLOTS } from '../../lib/tokens/token-slots.ts';

/**
 * How far one reservation can move a ceiling: a node reserves the next block of its own slot,
 * up to TOKEN_SLOTS blocks (of BlockTokenSource's default size) above the last one it knew of.
 */
export const CEILING_SLACK = BigInt(TOKEN_SLOTS) * 100_000n;
const LOG_EVERY_MS = 10_000;

export interface CeilingGuardDeps {
  /** The highest ceiling or token this node knows of by itself (TokenCeilings.known, token-ceilings.ts). */
  own(): bigint;
  now(): number;
  logger: Logger;
}

export class CeilingGuard {
  /** The highest ceiling this node accepted from a peer. */
  private accepted = 0n;
  private readonly loggedAt = new Map<string, number>();

  constructor(private readonly d: CeilingGuardDeps) {}

  /** The highest value a peer may report now. */
  limit(): bigint {
    const own = this.d.own();
    return (own > this.accepted ? own : this.accepted) + CEILING_SLACK;
  }

  /** A value from the snapshot of the active this node follows: its history from now on. */
  adopt(value: bigint): void {
    if (value > this.accepted) this.accepted = value;
  }

  /**
   * Whether `value` from `peer` may be acted on; a refusal is logged (at most every 10 s per
   * peer and message kind).
   */
  admit(value: bigint, peer: string, what: string): boolean {
    const limit = this.limit();
    if (value <= limit) {
      if (value > this.accepted) this.accepted = value;
      return true;
    }
    const key = `${peer} ${what}`;
    const now = this.d.now();
    if (now - (this.loggedAt.get(key) ?? Number.NEGATIVE_INFINITY) >= LOG_EVERY_MS) {
      this.loggedAt.set(key, now);
      this.d.logger.error(
        { peer, what, ceiling: value.toString(), limit: limit.toString() },
        `peer ceiling refused: ${peer} reported a token ceiling more than one reservation (${CEILING_SLACK} tokens) above anything this node has seen (not obeyed)`,
      );
    }
    return false;
  }
}
