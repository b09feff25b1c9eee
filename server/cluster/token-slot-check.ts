// Token slots (lib/tokens/token-slots.ts) keep two actives from issuing the same token only if
// every node gives every node the same slot: its position in cluster.json. Two files that list
// the peers in different orders (a reorder rolled out to some nodes only) can give two nodes one
// slot. Each status carries the sender's own position; a node whose file puts the sender
// elsewhere says so with an error line (at most every 10 s per peer), naming both positions,
// so the operator fixes the files before a partition could make both nodes active.
import type { Logger } from 'pino';

const LOG_EVERY_MS = 10_000;

export class TokenSlotCheck {
  private readonly loggedAt = new Map<string, number>();
  /** Peers whose last status disagreed with this node's file, and the position they claim. */
  readonly mismatched = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  /** A status from `peer`, which this node's file puts at `expected`, says it is at `claimed` (undefined: not said). */
  check(peer: string, expected: number, claimed: number | undefined): void {
    if (claimed === undefined || claimed === expected) {
      this.mismatched.delete(peer);
      return;
    }
    this.mismatched.set(peer, claimed);
    const now = this.now();
    if (now - (this.loggedAt.get(peer) ?? Number.NEGATIVE_INFINITY) < LOG_EVERY_MS) return;
    this.loggedAt.set(peer, now);
    this.logger.error(
      { peer, positionHere: expected, positionThere: claimed },
      `cluster.json differs: ${peer} is at position ${expected} of this node's peers but at ${claimed} of its own; a node's position is its fencing-token slot, so two nodes may share one and repeat tokens in a partition: give every node the same file`,
    );
  }
}
