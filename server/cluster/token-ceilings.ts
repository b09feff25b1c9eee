// The token ceilings a node knows of, and where each came from: its own reserved blocks and its
// store, the active it follows now (ceil messages, its snapshot, its stream's tokens), earlier
// actives (foreign), and what its peers report. A promotion starts above all it has heard of; a
// standby reports only the foreign part, so an active raises its floor only for ranges it did
// not reserve. Every ceiling a peer sends passes the guard (ceiling-guard.ts) before it counts.
import type { Logger } from 'pino';
import { CeilingGuard } from './ceiling-guard.ts';
import type { StoredCeilings } from './node-deps.ts';

export interface TokenCeilingsDeps {
  /** The node's token source: the ceiling of the blocks it reserved. */
  tokens: { readonly reservedCeiling: bigint };
  store: Pick<StoredCeilings, 'stored'>;
  /** The replication sink: the highest token the stream from the active carried. */
  sink: { maxToken: bigint };
  now(): number;
  logger: Logger;
}

export class TokenCeilings {
  readonly guard: CeilingGuard;
  /** The highest ceiling any peer has reported knowing of (see promotionFloor), and who reported it. */
  private peerCeiling = 0n;
  private peerCeilingFrom = '';
  /** Ceilings the active this node follows now sent it (ceil messages, its snapshot). */
  private seen = 0n;
  /**
   * The highest ceiling of token ranges that nodes other than the active this node follows may
   * have issued from: this node's own store at start, its own blocks while it was active, and
   * what earlier actives sent it. A standby reports this (not what the current active sent it)
   * in its heartbeat, so an active only raises its token floor for ranges it did not reserve.
   */
  private foreignCeiling = 0n;

  constructor(private readonly d: TokenCeilingsDeps) {
    this.guard = new CeilingGuard({ own: () => this.known(), now: d.now, logger: d.logger });
  }

  /** At start: what this node's store holds may have been issued by anyone. */
  start(): void {
    this.foreignCeiling = this.d.store.stored();
  }

  get foreign(): bigint {
    return this.foreignCeiling;
  }

  /** Every ceiling this node knows of by itself. */
  known(): bigint {
    let c = this.d.tokens.reservedCeiling;
    const stored = this.d.store.stored();
    if (stored > c) c = stored;
    if (this.d.sink.maxToken > c) c = this.d.sink.maxToken;
    if (this.seen > c) c = this.seen;
    if (this.foreignCeiling > c) c = this.foreignCeiling;
    return c;
  }

  /** A ceiling the active this node follows sent it (admitted by the guard). */
  noteSeen(c: bigint): void {
    if (c > this.seen) this.seen = c;
  }

  /** What a peer's status says it knows of; judged when a promotion would use it (promotionFloor), not here. */
  notePeer(known: bigint, from: string): void {
    if (known > this.peerCeiling) {
      this.peerCeiling = known;
      this.peerCeilingFrom = from;
    }
  }

  /** This node stops taking its tokens' range from the active it followed (or from itself): all it knew becomes foreign. */
  fold(): void {
    this.foreignCeiling = this.known();
    this.seen = 0n;
    this.d.sink.maxToken = 0n;
  }

  /** Every ceiling this node has heard of, its peers' included: a promotion starts above it. */
  promotionFloor(): bigint {
    const c = this.known();
    // A peer's word more than one reservation above all this node has seen is not obeyed (ceiling-guard.ts).
    return this.peerCeiling > c && this.guard.admit(this.peerCeiling, this.peerCeilingFrom, 'status') ? this.peerCeiling : c;
  }
}
