// Fencing tokens: one strictly increasing u64 sequence for every grant on every lock.
// Tokens are bigints end to end, so nothing is lost above 2^53.
//
// Tokens are handed out from reserved blocks: before the first token of a block is used, the
// block's ceiling is made durable (written and fsynced by the CeilingStore). After a crash the
// store holds a ceiling at or above every token ever issued, and a restart continues above it.

import { MAX_TOKEN, TokensUnavailable } from './token-contract.ts';
import { type BlockRange, checkSlots, SINGLE_SLOT, slotRangeAbove, slotTokensAbove, type TokenSlots } from './token-slots.ts';

// The u64 top and the error a source throws live in token-contract.ts, the one file of this
// folder the engine imports values from; every other module takes them from here.
export { MAX_TOKEN, TokensUnavailable };
export type { TokenSlots };

export interface BlockTokenSourceOptions {
  /** Monotonic ms, for spacing out retries of a failed save; without it every issue retries. */
  now?: () => number;
  /** After a failed blocking save, how long issues fail at once before the disk is tried again. 1,000 ms if not given. */
  retryMs?: number;
  /**
   * Which blocks this source may reserve (token-slots.ts): block k (tokens k*size+1 to
   * (k+1)*size) only when k mod slots.count is slots.slot. Every node of a cluster has its own
   * slot, so two nodes that both act as active (a partition) never issue the same token. A
   * single daemon owns every block ({ slot: 0, count: 1 }, the default).
   */
  slots?: TokenSlots;
}

export interface TokenSource {
  /** The next token; strictly greater than every token returned before, across restarts. */
  next(): bigint;
  /** The largest token issued so far (0 when none). */
  readonly highWater: bigint;
  /** Whether no token can ever be issued again (the last block this source may use is used up). */
  readonly exhausted: boolean;
  /** Optional: every later token is above `floor` (a token another node issued). */
  raiseFloor?(floor: bigint): void;
}

/**
 * What a cluster node drives of its token source: BlockTokenSource (blocks of its slot, stored in
 * its data dir and by its standbys) or, in the etcd mode, SuppliedTokenSource (blocks reserved in
 * etcd, supplied-token-source.ts).
 */
export interface ReservingTokenSource extends TokenSource {
  raiseFloor(floor: bigint): void;
  /** Reserves a fresh block and enters it; resolves once the next token can come from it (a promotion). */
  reserveAhead(): Promise<void>;
  /** Resolves when no reservation is in flight (tests, shutdown). */
  settled(): Promise<void>;
  /** The highest ceiling this source reserved, or its floor when that is higher. */
  readonly reservedCeiling: bigint;
  /** Tokens this source can still issue (baton_tokens_remaining). */
  readonly remaining: bigint;
}

/** Where the ceiling of the reserved block lives. */
export interface CeilingStore {
  /** The last durable ceiling, 0n when there is none. */
  load(): bigint;
  /** Makes `ceiling` durable before returning. */
  save(ceiling: bigint): void;
  /**
   * Optional: makes `ceiling` durable without blocking, resolving once it is. Never called
   * again before the previous call settles (wrap a store that several writers share in a
   * SerialCeilingStore). What load() returns must never go down because of it.
   */
  saveAhead?(ceiling: bigint): Promise<void>;
}

/**
 * Reserves blocks of tokens ahead of use. With a store that can save without blocking, the next
 * block is reserved in the background once half of the current one is used, so the hot path
 * never waits for an fsync; the blocking save is only the fallback when the background one has
 * not finished (or failed) by the time the block runs out.
 *
 * Tokens are issued only from blocks this source reserved itself, and only from blocks of its
 * slot: `current < token <= end` is the range in use; `ahead` the next range, stored in the
 * background and not entered yet. A range is never entered unless it lies above every token
 * issued, so the sequence is strictly increasing whatever order saves complete in.
 */
export class BlockTokenSource implements ReservingTokenSource {
  /** The last token issued, or a floor every later token is above. */
  private current: bigint;
  /** The top of the range in use: tokens in (current, end] are this source's and durable. */
  private end: bigint;
  /** The highest ceiling this source reserved (or the floor, when higher). */
  private ceiling: bigint;
  /** A stored block above `end`, not entered yet (its range runs from its start to its end). */
  private aheadRange: BlockRange | null = null;
  private readonly halfBlock: bigint;
  private readonly slots: TokenSlots;
  private ahead: Promise<void> | null = null;
  /** After a failed background save, wait for a blocking save to succeed before trying again. */
  private aheadFailed = false;
  /** The last failed blocking save, and when the disk may be tried again (monotonic ms). */
  private failure: TokensUnavailable | null = null;
  private retryAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: CeilingStore,
    private readonly blockSize = 100_000n,
    private readonly onAheadError: (err: unknown) => void = () => {},
    private readonly options: BlockTokenSourceOptions = {},
  ) {
    if (blockSize < 1n) throw new RangeError('block size must be positive');
    this.slots = options.slots ?? SINGLE_SLOT;
    checkSlots(this.slots);
    this.halfBlock = blockSize / 2n;
    // Every token up to the stored ceiling may have been issued before (by any node, under any
    // slot layout, or by a build before slots): start above it.
    this.ceiling = store.load();
    this.current = this.ceiling;
    this.end = this.ceiling;
  }

  get highWater(): bigint {
    return this.current;
  }

  /** Tokens this source can still issue: those of its slot's blocks above the last one issued (or the floor). */
  get remaining(): bigint {
    return slotTokensAbove(this.current, this.blockSize, this.slots);
  }

  /** The highest ceiling this source reserved (durable), or the floor when that is higher. */
  get reservedCeiling(): bigint {
    return this.ceiling;
  }

  next(): bigint {
    if (this.current >= this.end) this.enterNextRange();
    this.current += 1n;
    if (
      this.ahead === null &&
      this.aheadRange === null &&
      !this.aheadFailed &&
      this.end - this.current <= this.halfBlock &&
      this.store.saveAhead !== undefined
    ) {
      this.startAhead(this.store.saveAhead.bind(this.store));
    }
    return this.current;
  }

  /**
   * Every later token is above `floor`. Tokens between the old and the new floor are skipped;
   * a floor above the range in use makes the next token enter a stored range above it or
   * reserve a new block first.
   */
  raiseFloor(floor: bigint): void {
    if (floor <= this.current) return;
    this.current = floor;
    if (this.ceiling < floor) this.ceiling = floor;
    // A stored range that the floor passed can no longer be entered.
    if (this.aheadRange !== null && this.aheadRange.end <= floor) this.aheadRange = null;
  }

  /**
   * Reserves a fresh block now and resolves once it is durable (rejects when the save fails);
   * the next token comes from it. A node taking over as active calls it, so that no token it
   * issues comes from a block that is not saved yet (with a replicating store: not acknowledged
   * by the standbys yet).
   */
  async reserveAhead(): Promise<void> {
    // One background reservation at a time: the store never sees two saves at once.
    while (this.ahead !== null) await this.ahead;
    const range = this.rangeAbove(this.ceiling > this.current ? this.ceiling : this.current);
    if (range === null) return; // this slot's blocks are used up: next() says so
    const saveAhead = this.store.saveAhead;
    if (saveAhead === undefined) {
      this.store.save(range.end);
      this.aheadFailed = false;
      this.enter(range);
      return;
    }
    const saving = saveAhead.call(this.store, range.end);
    // Registered as the background reservation, so next() does not start another meanwhile.
    this.ahead = saving.then(
      () => {
        this.aheadFailed = false;
        this.ahead = null;
      },
      () => {
        this.ahead = null; // the caller gets the error
      },
    );
    await saving;
    // A floor raised meanwhile may have passed it: then next() finds another.
    if (range.end > this.current) this.enter(range);
  }

  /** Resolves when no background reservation is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.ahead !== null) await this.ahead;
  }

  /** No token can be issued here any more: every block of this source's slot is used (or skipped). */
  get exhausted(): boolean {
    if (this.current < this.end) return false;
    if (this.aheadRange !== null && this.aheadRange.end > this.current) return false;
    return this.rangeAbove(this.current) === null;
  }

  /** The range in use is used up: enter the stored one above it, or reserve one with a blocking save. */
  private enterNextRange(): void {
    const stored = this.aheadRange;
    if (stored !== null) {
      this.aheadRange = null;
      if (stored.end > this.current) {
        this.enter(stored);
        return;
      }
    }
    this.reserve();
  }

  private reserve(): void {
    const range = this.rangeAbove(this.current);
    if (range === null) throw new TokensUnavailable('tokens-exhausted');
    // A disk that just failed is not hammered by every acquire: they fail at once until retryAt.
    const now = this.options.now?.();
    if (this.failure !== null && now !== undefined && now < this.retryAt) throw this.failure;
    try {
      this.store.save(range.end);
    } catch (err) {
      this.failure = new TokensUnavailable('storage-unavailable', { cause: err });
      this.retryAt = (now ?? 0) + (this.options.retryMs ?? 1_000);
      throw this.failure;
    }
    this.failure = null;
    this.aheadFailed = false;
    this.enter(range);
  }

  /** Makes `range` the one in use: tokens go on from above its start (or above current, if higher). */
  private enter(range: BlockRange): void {
    if (range.start > this.current) this.current = range.start;
    this.end = range.end;
    if (range.end > this.ceiling) this.ceiling = range.end;
    if (this.aheadRange !== null && this.aheadRange.end <= this.end) this.aheadRange = null;
  }

  /** A stored range becomes the next one to enter, if it lies above the range in use. */
  private offerAhead(range: BlockRange): void {
    if (range.end > this.ceiling) this.ceiling = range.end;
    if (range.start < this.end || range.end <= this.current) return;
    if (this.aheadRange === null || range.start < this.aheadRange.start) this.aheadRange = range;
  }

  private startAhead(saveAhead: (ceiling: bigint) => Promise<void>): void {
    const range = this.rangeAbove(this.ceiling > this.end ? this.ceiling : this.end);
    if (range === null) return;
    this.ahead = saveAhead(range.end).then(
      () => {
        // A blocking reservation may have gone past it meanwhile: then it is not entered.
        this.offerAhead(range);
        this.ahead = null;
      },
      (err: unknown) => {
        this.aheadFailed = true;
        this.ahead = null;
        this.onAheadError(err);
      },
    );
  }

  /** The tokens above `after` in the first block of this slot that has any: null when none is left. */
  private rangeAbove(after: bigint): BlockRange | null {
    return slotRangeAbove(after, this.blockSize, this.slots);
  }
}

/** A store that keeps the ceiling in memory only (tests, throwaway nodes). */
export class MemoryCeilingStore implements CeilingStore {
  saves = 0;
  constructor(private ceiling = 0n) {}
  load(): bigint {
    return this.ceiling;
  }
  save(ceiling: bigint): void {
    this.ceiling = ceiling;
    this.saves++;
  }
}
