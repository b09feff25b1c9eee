// Fencing tokens from blocks that a service outside this node reserves: the etcd mode (issue 32),
// where the active takes each block by a compare-and-swap on the cluster's token-ceiling key,
// guarded by its role lease (server/coordination/etcd-token-blocks.ts). BlockTokenSource reserves
// blocks of its own slot and stores them itself; this one only asks for the next block and issues
// from what it was given.
//
// Why tokens rise across every active. The supplier hands out each block above every block it
// handed out before, to any node, and a node issues only from blocks it was handed. A promotion
// (reserveAhead) always enters a fresh block, never one left from an earlier term: the fresh one
// is above every token any active issued since. Within a term each refill is above the block in
// use, and the source's floor (the highest token it issued, replicated or heard of) only ever
// raises where the next block starts.
//
// The grant path never waits: the next block is asked for once half of the one in use is left.
// When one runs out before the next arrives, no token is thrown at a client: onStarved shuts the
// engine's grant gate as soon as the last token of the range is issued (LockEngine.awaitTokens),
// so requests queue as waiters, and onSupplied opens it once a block arrives.
import { MAX_TOKEN, TokensUnavailable } from './token-contract.ts';
import type { CeilingStore, ReservingTokenSource } from './token-source.ts';

/** A block of tokens, both ends issued from it. */
export interface SuppliedBlock {
  readonly first: bigint;
  readonly last: bigint;
}

export interface BlockSupplier {
  /** Tokens per block it hands out: the next is asked for once half of one is left. */
  readonly size: bigint;
  /**
   * The next block above `floor` and above every block handed out before (to any node). Transient
   * failures are retried inside; it rejects only when this node must take no block any more (it
   * does not hold the active role, or the supplier was stopped), or, with a TokensUnavailable
   * 'tokens-exhausted', when no block fits below 2^64.
   */
  reserve(floor: bigint): Promise<SuppliedBlock>;
}

export interface SuppliedTokenSourceOptions {
  supplier: BlockSupplier;
  /**
   * This node's data dir: each block's ceiling is also recorded there (so the peers mode, if the
   * cluster goes back to it, starts above every token issued here), and its load() is the floor
   * this source starts from.
   */
  store: CeilingStore;
  /** The range in use is spent and no block is waiting: shut the grant gate (LockEngine.awaitTokens). */
  onStarved(): void;
  /** Tokens can be issued again (LockEngine.tokensArrived). Never called from inside next(). */
  onSupplied(): void;
  /** A reservation was refused or a local record failed (the caller logs it). */
  onError(err: unknown): void;
}

export class SuppliedTokenSource implements ReservingTokenSource {
  /** The last token issued, or a floor every later token is above. */
  private current: bigint;
  /** The top of the range in use: tokens in (current, end] are this node's. */
  private end: bigint;
  /** The highest block end this source was handed (or its floor, when higher). */
  private ceiling: bigint;
  /** A block handed out ahead of need, not entered yet. */
  private waiting: SuppliedBlock | null = null;
  /** The reservation in flight; never rejects (its caller gets the error). */
  private pending: Promise<void> | null = null;
  /** Whether this source takes blocks as the active: from a promotion until a reservation is refused. */
  private drawing = false;
  /** No token can be issued until a block arrives (the gate is shut); invariant: then `waiting` is null. */
  private starved = true;
  private outOfTokens = false;
  private readonly refillAt: bigint;

  constructor(private readonly o: SuppliedTokenSourceOptions) {
    if (o.supplier.size < 1n) throw new RangeError('block size must be positive');
    this.refillAt = o.supplier.size / 2n;
    this.ceiling = o.store.load();
    this.current = this.ceiling;
    this.end = this.ceiling;
  }

  get highWater(): bigint {
    return this.current;
  }

  get reservedCeiling(): bigint {
    return this.ceiling;
  }

  /** The u64 left above the last token: blocks come from the one key, not from a slot. */
  get remaining(): bigint {
    return MAX_TOKEN - this.current;
  }

  get exhausted(): boolean {
    return this.outOfTokens && this.current >= this.end && this.waiting === null;
  }

  /** Whether a token can be issued now without waiting for a block. */
  get supplied(): boolean {
    return !this.starved;
  }

  next(): bigint {
    if (this.current >= this.end && !this.enterWaiting()) {
      // Not reached through a shut gate; a handover that retries after an undeliverable grant can.
      this.starve();
      this.refill();
      throw new TokensUnavailable(this.outOfTokens ? 'tokens-exhausted' : 'storage-unavailable');
    }
    const token = this.current + 1n;
    this.current = token;
    if (this.waiting === null) {
      if (this.end - token <= this.refillAt) this.refill();
      if (token === this.end) this.starve();
    }
    return token;
  }

  raiseFloor(floor: bigint): void {
    if (floor <= this.current) return;
    // While this node is the active, a floor inside a block it holds is its own reservation echoed
    // back (its data dir's record, its reserved ceiling, as a promotion reads its known ceilings):
    // nobody else issues from a block this node won in etcd, so skipping to it would only waste it.
    if (this.drawing && (floor <= this.end || (this.waiting !== null && floor >= this.waiting.first && floor <= this.waiting.last))) return;
    this.current = floor;
    if (floor > this.ceiling) this.ceiling = floor;
    if (this.waiting !== null && this.waiting.last <= floor) this.waiting = null;
    if (this.current >= this.end && !this.enterWaiting()) {
      this.starve();
      this.refill();
    }
  }

  /**
   * A promotion: takes a fresh block and enters it, whatever is left of an earlier one (tokens go
   * on above every token issued by any active since). Rejects when the supplier refuses.
   */
  async reserveAhead(): Promise<void> {
    await this.settled();
    this.drawing = true;
    this.outOfTokens = false;
    this.waiting = null;
    await this.draw((block) => {
      if (block.last > this.current) {
        this.enter(block);
        this.supply();
      } else {
        // The floor passed it while it was reserved: the next one is above the floor.
        this.starve();
        this.refill();
      }
    });
  }

  async settled(): Promise<void> {
    while (this.pending !== null) await this.pending;
  }

  /** The next block, asked for in the background (at most one reservation in flight). */
  private refill(): void {
    if (this.pending !== null || !this.drawing || this.outOfTokens) return;
    this.draw((block) => this.offer(block)).catch((err: unknown) => this.o.onError(err));
  }

  private draw(use: (block: SuppliedBlock) => void): Promise<void> {
    const floor = this.ceiling > this.current ? this.ceiling : this.current;
    const run = this.o.supplier.reserve(floor).then(async (block) => {
      if (block.first <= floor || block.last < block.first) throw new Error(`block ${block.first}-${block.last} is not above ${floor}`);
      await this.record(block.last);
      if (block.last > this.ceiling) this.ceiling = block.last;
      use(block);
    });
    this.pending = run.then(
      () => {
        this.pending = null;
        // A refill asked for while this one was in flight was dropped (one at a time). The block
        // may have been spent past its half since, even to the end: onSupplied grants the engine's
        // waiters at once, inside `use`. Asked for now, or a starved source would wait forever.
        if (this.waiting === null && this.end - this.current <= this.refillAt) this.refill();
      },
      (err: unknown) => {
        this.pending = null;
        // A refusal ends drawing until the next promotion (the supplier retries anything transient).
        this.drawing = false;
        if (err instanceof TokensUnavailable && err.reason === 'tokens-exhausted') this.outOfTokens = true;
      },
    );
    return run;
  }

  /** A refill arrived: entered at once if the range in use is spent, kept for later otherwise. */
  private offer(block: SuppliedBlock): void {
    if (block.last <= this.current) {
      if (this.current >= this.end) this.refill();
      return;
    }
    if (this.current >= this.end) {
      this.enter(block);
      this.supply();
    } else if (this.waiting === null || block.last > this.waiting.last) this.waiting = block;
  }

  private enterWaiting(): boolean {
    const block = this.waiting;
    if (block === null) return false;
    this.waiting = null;
    if (block.last <= this.current) return false;
    this.enter(block);
    return true;
  }

  private enter(block: SuppliedBlock): void {
    const start = block.first - 1n;
    if (start > this.current) this.current = start;
    this.end = block.last;
  }

  private async record(ceiling: bigint): Promise<void> {
    try {
      if (this.o.store.saveAhead === undefined) this.o.store.save(ceiling);
      else await this.o.store.saveAhead(ceiling);
    } catch (err) {
      // The block is this node's all the same (the supplier is the authority in this mode).
      this.o.onError(err);
    }
  }

  private starve(): void {
    if (this.starved) return;
    this.starved = true;
    this.o.onStarved();
  }

  private supply(): void {
    if (!this.starved) return;
    this.starved = false;
    this.o.onSupplied();
  }
}
