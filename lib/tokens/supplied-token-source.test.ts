import { describe, expect, it } from 'vitest';
import { type BlockSupplier, type SuppliedBlock, SuppliedTokenSource } from './supplied-token-source.ts';
import { MemoryCeilingStore, TokensUnavailable } from './token-source.ts';

/** Lets queued promise callbacks run. */
const drain = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A supplier whose reservations complete only when the test says so, each above the last it handed out. */
class ManualSupplier implements BlockSupplier {
  ceiling = 0n;
  readonly floors: bigint[] = [];
  private pending: Array<{ floor: bigint; resolve: (b: SuppliedBlock) => void; reject: (e: unknown) => void }> = [];
  constructor(readonly size: bigint) {}
  reserve(floor: bigint): Promise<SuppliedBlock> {
    this.floors.push(floor);
    return new Promise((resolve, reject) => this.pending.push({ floor, resolve, reject }));
  }
  get inFlight(): number {
    return this.pending.length;
  }
  /** Hands out the oldest pending reservation's block. */
  grant(): SuppliedBlock {
    const p = this.pending.shift();
    if (p === undefined) throw new Error('nothing pending');
    const start = p.floor > this.ceiling ? p.floor : this.ceiling;
    const block = { first: start + 1n, last: start + this.size };
    this.ceiling = block.last;
    p.resolve(block);
    return block;
  }
  refuse(err: unknown): void {
    this.pending.shift()?.reject(err);
  }
}

function source(size = 10n, stored = 0n) {
  const supplier = new ManualSupplier(size);
  const store = new MemoryCeilingStore(stored);
  const log: string[] = [];
  const errors: unknown[] = [];
  const tokens = new SuppliedTokenSource({
    supplier,
    store,
    onStarved: () => log.push('starved'),
    onSupplied: () => log.push('supplied'),
    onError: (err) => errors.push(err),
  });
  const take = (n: number) => Array.from({ length: n }, () => tokens.next());
  const promote = async () => {
    const done = tokens.reserveAhead();
    await drain();
    supplier.grant();
    await done;
  };
  return { supplier, store, log, errors, tokens, take, promote };
}

const rising = (t: bigint[]) => t.every((x, i) => i === 0 || x > (t[i - 1] as bigint));

describe('SuppliedTokenSource', () => {
  it('issues nothing before a promotion reserved its first block, and above the data dir’s ceiling after it', async () => {
    const s = source(10n, 500n);
    expect(s.tokens.supplied).toBe(false);
    expect(() => s.tokens.next()).toThrow(TokensUnavailable);
    expect(s.supplier.inFlight).toBe(0); // no block is asked for before a promotion
    await s.promote();
    expect(s.supplier.floors).toEqual([500n]);
    expect(s.log).toEqual(['supplied']);
    expect(s.take(3)).toEqual([501n, 502n, 503n]);
    expect(s.store.load()).toBe(510n); // recorded in the data dir before the first token
  });

  it('asks for the next block at half a block, without waiting for it, and enters it when the first is spent', async () => {
    const s = source(10n);
    await s.promote();
    s.take(4);
    expect(s.supplier.inFlight).toBe(0);
    s.take(1); // 5: half of the block left
    expect(s.supplier.inFlight).toBe(1);
    expect(s.supplier.floors.at(-1)).toBe(10n);
    s.supplier.grant();
    await s.tokens.settled();
    const more = s.take(10);
    expect(more).toEqual([6n, 7n, 8n, 9n, 10n, 11n, 12n, 13n, 14n, 15n]);
    expect(s.log).toEqual(['supplied']); // never starved
  });

  it('says it is starved as the last token of the block is issued when the next has not come, and supplied when it does', async () => {
    const s = source(10n);
    await s.promote();
    expect(s.take(10).at(-1)).toBe(10n);
    expect(s.log).toEqual(['supplied', 'starved']);
    expect(() => s.tokens.next()).toThrow(/durable/);
    expect(s.supplier.inFlight).toBe(1); // one reservation only, however often it is asked
    s.supplier.grant();
    await s.tokens.settled();
    expect(s.log).toEqual(['supplied', 'starved', 'supplied']);
    expect(s.take(2)).toEqual([11n, 12n]);
  });

  it('a block handed out to a starved source and spent past its half inside onSupplied (the engine grants its waiters there) still gets its refill', async () => {
    const supplier = new ManualSupplier(10n);
    const issued: bigint[] = [];
    let grantOnSupply = 0;
    const tokens: SuppliedTokenSource = new SuppliedTokenSource({
      supplier,
      store: new MemoryCeilingStore(0n),
      onStarved: () => {},
      // LockEngine.tokensArrived hands the waiting requests their grants at once, before the reservation settles.
      onSupplied: () => {
        for (; grantOnSupply > 0 && tokens.supplied; grantOnSupply--) issued.push(tokens.next());
      },
      onError: () => {},
    });
    const promoted = tokens.reserveAhead();
    await drain();
    supplier.grant();
    await promoted;
    for (let i = 0; i < 10; i++) issued.push(tokens.next()); // the refill asked at 5 has not come
    expect(tokens.supplied).toBe(false);
    grantOnSupply = 100; // more waiters than a block holds
    supplier.grant();
    await drain();
    expect(issued.at(-1)).toBe(20n);
    // Spent past its half while its own reservation had not settled: the next one is asked for all the same.
    expect(supplier.inFlight).toBe(1);
    expect(supplier.floors.at(-1)).toBe(20n);
    supplier.grant(); // the waiters left take this one whole too, and the next is asked for again
    await drain();
    expect(issued).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i + 1)));
    expect(supplier.floors).toEqual([0n, 10n, 20n, 30n]);
  });

  it('a promotion enters a fresh block, not one reserved in its earlier term', async () => {
    const s = source(10n);
    await s.promote();
    s.take(6); // the refill of 11..20 is asked for and handed out
    s.supplier.grant();
    await s.tokens.settled();
    // Another active took 21..30 and issued from it while this node heard of none of it.
    s.supplier.ceiling = 30n;
    await s.promote();
    expect(s.take(1)).toEqual([31n]);
  });

  it('while active, a floor inside its own blocks (its reservation read back by a promotion) skips nothing', async () => {
    const s = source(10n);
    await s.promote();
    s.tokens.raiseFloor(10n); // the block's own end, as TokenCeilings.known() reports it
    expect(s.take(5)).toEqual([1n, 2n, 3n, 4n, 5n]);
    s.supplier.grant(); // 11..20 waits
    await s.tokens.settled();
    s.tokens.raiseFloor(20n);
    expect(s.take(6)).toEqual([6n, 7n, 8n, 9n, 10n, 11n]);
    // A floor above both is another node's: it counts.
    s.tokens.raiseFloor(25n);
    expect(s.log.at(-1)).toBe('starved');
  });

  it('a floor raised past the block in use starves the source and reserves above the floor', async () => {
    const s = source(10n);
    await s.promote();
    s.take(2);
    s.tokens.raiseFloor(1_000n);
    expect(s.log).toEqual(['supplied', 'starved']);
    expect(s.supplier.floors.at(-1)).toBe(1_000n);
    s.supplier.grant();
    await s.tokens.settled();
    expect(s.take(1)).toEqual([1_001n]);
    expect(s.log.at(-1)).toBe('supplied');
  });

  it('a refused reservation stops drawing until the next promotion', async () => {
    const s = source(10n);
    await s.promote();
    s.take(5);
    s.supplier.refuse(new Error('not the holder'));
    await s.tokens.settled();
    expect(s.errors).toHaveLength(1);
    s.take(5);
    expect(() => s.tokens.next()).toThrow(TokensUnavailable);
    expect(s.supplier.inFlight).toBe(0);
    await s.promote();
    expect(s.take(1)).toEqual([11n]);
  });

  it('is exhausted once the supplier says no block fits below 2^64 and the block in use is spent', async () => {
    const s = source(4n);
    await s.promote();
    s.take(2);
    s.supplier.refuse(new TokensUnavailable('tokens-exhausted'));
    await s.tokens.settled();
    expect(s.tokens.exhausted).toBe(false);
    s.take(2);
    expect(s.tokens.exhausted).toBe(true);
    expect(() => s.tokens.next()).toThrow(/exhausted/);
  });

  it('tokens rise however blocks, floors and promotions interleave', async () => {
    const s = source(7n);
    const issued: bigint[] = [];
    await s.promote();
    for (let round = 0; round < 200; round++) {
      const r = (round * 7919) % 13;
      if (r < 8 && s.tokens.supplied) issued.push(s.tokens.next());
      else if (r === 8 && s.supplier.inFlight > 0) s.supplier.grant();
      else if (r === 9) s.tokens.raiseFloor(s.tokens.highWater + 3n);
      else if (r === 10 && s.supplier.inFlight === 0) await s.promote();
      await drain();
    }
    expect(issued.length).toBeGreaterThan(50);
    expect(rising(issued)).toBe(true);
    expect(issued.every((t) => t <= s.supplier.ceiling)).toBe(true);
  });
});
