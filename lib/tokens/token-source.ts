// Fencing tokens: one strictly increasing u64 sequence for every grant on every lock.
// Tokens are bigints end to end, so nothing is lost above 2^53.
//
// Tokens are handed out from reserved blocks: before the first token of a block is used, the
// block's ceiling is made durable (written and fsynced by the CeilingStore). After a crash the
// store holds a ceiling at or above every token ever issued, and a restart continues above it.

import { MAX_TOKEN, TokensUnavailable } from '../engine/token-contract.ts';

// The u64 top and the error a source throws live beside the engine (which may import this
// folder for types only); every other module takes them from here.
export { MAX_TOKEN, TokensUnavailable };

export interface BlockTokenSourceOptions {
  /** Monotonic ms, for spacing out retries of a failed save; without it every issue retries. */
  now?: () => number;
  /** After a failed blocking save, how long issues fail at once before the disk is tried again. 1,000 ms if not given. */
  retryMs?: number;
}

export interface TokenSource {
  /** The next token; strictly greater than every token returned before, across restarts. */
  next(): bigint;
  /** The largest token issued so far (0 when none). */
  readonly highWater: bigint;
  /** Optional: every later token is above `floor` (a token another node issued). */
  raiseFloor?(floor: bigint): void;
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
 */
export class BlockTokenSource implements TokenSource {
  private current: bigint;
  private ceiling: bigint;
  private readonly halfBlock: bigint;
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
    this.halfBlock = blockSize / 2n;
    // Every token up to the stored ceiling may have been issued before: start above it.
    this.ceiling = store.load();
    this.current = this.ceiling;
  }

  get highWater(): bigint {
    return this.current;
  }

  /** The durable ceiling of the block in use. */
  get reservedCeiling(): bigint {
    return this.ceiling;
  }

  next(): bigint {
    if (this.current >= this.ceiling) this.reserve();
    this.current += 1n;
    if (this.ahead === null && !this.aheadFailed && this.ceiling - this.current <= this.halfBlock && this.store.saveAhead !== undefined) {
      this.startAhead(this.store.saveAhead.bind(this.store));
    }
    return this.current;
  }

  /**
   * Every later token is above `floor`. Tokens between the old and the new floor are skipped;
   * a floor above the reserved block makes the next token reserve a new block first.
   */
  raiseFloor(floor: bigint): void {
    if (floor > this.current) this.current = floor;
    if (this.ceiling < this.current) this.ceiling = this.current;
  }

  /**
   * Reserves the next block now and resolves once it is durable (rejects when the save fails).
   * A node taking over as active calls it, so that no token it issues comes from a block that
   * is not saved yet (with a replicating store: not acknowledged by the standbys yet).
   */
  async reserveAhead(): Promise<void> {
    // One background reservation at a time: the store never sees two saves at once.
    while (this.ahead !== null) await this.ahead;
    const base = this.ceiling > this.current ? this.ceiling : this.current;
    let target = base + this.blockSize;
    if (target > MAX_TOKEN) target = MAX_TOKEN;
    if (target <= this.ceiling) return; // u64 exhausted: nothing left to reserve
    const saveAhead = this.store.saveAhead;
    if (saveAhead === undefined) {
      this.store.save(target);
      this.ceiling = target;
      this.aheadFailed = false;
      return;
    }
    const saving = saveAhead.call(this.store, target);
    // Registered as the background reservation, so next() does not start another meanwhile.
    this.ahead = saving.then(
      () => {
        if (target > this.ceiling) this.ceiling = target;
        this.aheadFailed = false;
        this.ahead = null;
      },
      () => {
        this.ahead = null; // the caller gets the error
      },
    );
    await saving;
    if (target > this.ceiling) this.ceiling = target;
  }

  /** Resolves when no background reservation is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.ahead !== null) await this.ahead;
  }

  /** Every token of the u64 has been issued (or skipped): no grant can be made here any more. */
  get exhausted(): boolean {
    return this.current >= MAX_TOKEN;
  }

  private reserve(): void {
    if (this.current >= MAX_TOKEN) throw new TokensUnavailable('tokens-exhausted');
    // A disk that just failed is not hammered by every acquire: they fail at once until retryAt.
    const now = this.options.now?.();
    if (this.failure !== null && now !== undefined && now < this.retryAt) throw this.failure;
    let ceiling = this.current + this.blockSize;
    if (ceiling > MAX_TOKEN) ceiling = MAX_TOKEN;
    try {
      this.store.save(ceiling);
    } catch (err) {
      this.failure = new TokensUnavailable('storage-unavailable', { cause: err });
      this.retryAt = (now ?? 0) + (this.options.retryMs ?? 1_000);
      throw this.failure;
    }
    this.failure = null;
    this.ceiling = ceiling;
    this.aheadFailed = false;
  }

  private startAhead(saveAhead: (ceiling: bigint) => Promise<void>): void {
    let target = this.ceiling + this.blockSize;
    if (target > MAX_TOKEN) target = MAX_TOKEN;
    if (target <= this.ceiling) return;
    this.ahead = saveAhead(target).then(
      () => {
        // A blocking reservation may have gone further meanwhile; the ceiling never goes down.
        if (target > this.ceiling) this.ceiling = target;
        this.ahead = null;
      },
      (err: unknown) => {
        this.aheadFailed = true;
        this.ahead = null;
        this.onAheadError(err);
      },
    );
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
