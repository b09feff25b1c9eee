// The bound on token ceilings a peer can make this node act on. A ceiling from a peer raises
// this node's token floor (an active skips to above it; a standby promotes above it), and a
// floor near the top of u64 ends the token sequence for good: the node exits on its next grant,
// and every data dir the value reaches does the same on every restart. So a peer's ceiling is
// only obeyed when it is at most one token block above anything this node has seen itself
// (its own tokens and stored ceilings, and peer ceilings it accepted before): in the protocol a
// ceiling moves one block per reservation. A node with no history at all (an empty data dir,
// nothing accepted yet) takes the first snapshot of the active it follows as its history: it has
// nothing to judge it by, and refusing would make it promote below the cluster's tokens.
import type { Logger } from 'pino';

/** One token block (lib/tokens BlockTokenSource's default size). */
export const CEILING_SLACK = 100_000n;
const LOG_EVERY_MS = 10_000;

export interface CeilingGuardDeps {
  /** The highest ceiling or token this node knows of by itself (ClusterNode.knownCeiling). */
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

  /**
   * Whether `value` from `peer` may be acted on; a refusal is logged (at most every 10 s per
   * peer and message kind). `firstSnapshot`: the value is from the snapshot of the active this
   * node follows, which a node with no history takes as it is.
   */
  admit(value: bigint, peer: string, what: string, firstSnapshot = false): boolean {
    const limit = this.limit();
    if (value <= limit || (firstSnapshot && this.accepted === 0n && this.d.own() === 0n)) {
      if (value > this.accepted) this.accepted = value;
      return true;
    }
    const key = `${peer} ${what}`;
    const now = this.d.now();
    if (now - (this.loggedAt.get(key) ?? Number.NEGATIVE_INFINITY) >= LOG_EVERY_MS) {
      this.loggedAt.set(key, now);
      this.d.logger.error(
        { peer, what, ceiling: value.toString(), limit: limit.toString() },
        `peer ceiling refused: ${peer} reported a token ceiling more than one block above anything this node has seen (not obeyed)`,
      );
    }
    return false;
  }
}
