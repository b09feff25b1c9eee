// Fencing tokens: one strictly increasing u64 sequence for every grant on every lock.
// Tokens are bigints end to end, so nothing is lost above 2^53.
//
// Tokens are handed out from reserved blocks: before the first token of a block is used, the
// block's ceiling is made durable (written and fsynced by the CeilingStore). After a crash the
// store holds a ceiling at or above every token ever issued, and a restart continues above it.

export const MAX_TOKEN = (1n << 64n) - 1n;

export interface TokenSource {
  /** The next token; strictly greater than every token returned before, across restarts. */
  next(): bigint;
  /** The largest token issued so far (0 when none). */
  readonly highWater: bigint;
}

/** Where the ceiling of the reserved block lives. */
export interface CeilingStore {
  /** The last durable ceiling, 0n when there is none. */
  load(): bigint;
  /** Makes `ceiling` durable before returning. */
  save(ceiling: bigint): void;
}

export class BlockTokenSource implements TokenSource {
  private current: bigint;
  private ceiling: bigint;

  constructor(
    private readonly store: CeilingStore,
    private readonly blockSize = 100_000n,
  ) {
    if (blockSize < 1n) throw new RangeError('block size must be positive');
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
    return this.current;
  }

  private reserve(): void {
    if (this.current >= MAX_TOKEN) throw new RangeError('fencing tokens exhausted (u64)');
    let ceiling = this.current + this.blockSize;
    if (ceiling > MAX_TOKEN) ceiling = MAX_TOKEN;
    this.store.save(ceiling);
    this.ceiling = ceiling;
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
