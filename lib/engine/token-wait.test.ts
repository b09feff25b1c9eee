// The engine with the etcd mode's token source (lib/tokens/supplied-token-source.ts): while no
// block has arrived, a request for a free lock waits as a waiter, never fails, and is granted
// once the block comes; nothing else (a grant window, released handovers) opens the gate early.
import { describe, expect, it } from 'vitest';
import { type BlockSupplier, type SuppliedBlock, SuppliedTokenSource } from '../tokens/supplied-token-source.ts';
import { MemoryCeilingStore } from '../tokens/token-source.ts';
import { FakeClock } from './clock.ts';
import { LockEngine } from './lock-engine.ts';
import { Owner } from './testing/engine-fixture.ts';

const drain = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

class HeldSupplier implements BlockSupplier {
  private ceiling = 0n;
  private pending: Array<(b: SuppliedBlock) => void> = [];
  constructor(readonly size: bigint) {}
  reserve(floor: bigint): Promise<SuppliedBlock> {
    if (floor > this.ceiling) this.ceiling = floor;
    return new Promise((resolve) => this.pending.push(resolve));
  }
  get inFlight(): number {
    return this.pending.length;
  }
  grant(): void {
    const resolve = this.pending.shift();
    if (resolve === undefined) throw new Error('nothing pending');
    const block = { first: this.ceiling + 1n, last: this.ceiling + this.size };
    this.ceiling = block.last;
    resolve(block);
  }
}

function engineWithSupplier(size = 4n) {
  const clock = new FakeClock(1_000);
  const supplier = new HeldSupplier(size);
  let engine: LockEngine | null = null;
  const tokens = new SuppliedTokenSource({
    supplier,
    store: new MemoryCeilingStore(),
    onStarved: () => engine?.awaitTokens(),
    onSupplied: () => engine?.tokensArrived(),
    onError: (err) => {
      throw err;
    },
  });
  engine = new LockEngine(clock, tokens);
  engine.awaitTokens();
  const e = engine;
  const acquire = (name: string, owner = new Owner()) => e.acquire({ name, owner, protocol: 'keyed', client: 'k', leaseMs: 10_000, waitMs: 0, sliding: false });
  return { engine: e, tokens, supplier, acquire };
}

describe('the engine awaiting a token block', () => {
  it('a request for a free lock waits until the first block arrives, then is granted from it', async () => {
    const { engine, tokens, supplier, acquire } = engineWithSupplier();
    const owner = new Owner();
    const claim = acquire('a', owner);
    expect(claim.state).toBe('waiting');
    // Neither a grant window nor released handovers open the gate without a block.
    engine.setGrantWindow(Number.POSITIVE_INFINITY);
    expect(acquire('b').state).toBe('waiting');
    engine.releaseHandovers();
    expect(acquire('c').state).toBe('waiting');
    expect(claim.state).toBe('waiting');
    const promoted = tokens.reserveAhead();
    await drain();
    supplier.grant();
    await promoted;
    expect(claim.state).toBe('holding');
    expect(owner.granted.map((c) => c.token)).toEqual([1n]);
  });

  it('a block spent before the next arrives makes the next request wait, not fail', async () => {
    const { tokens, supplier, acquire } = engineWithSupplier(4n);
    const promoted = tokens.reserveAhead();
    await drain();
    supplier.grant();
    await promoted;
    const first = ['a', 'b', 'c', 'd'].map((n) => acquire(n));
    expect(first.map((c) => c.token)).toEqual([1n, 2n, 3n, 4n]);
    expect(supplier.inFlight).toBe(1); // the refill, asked for at half the block
    const owner = new Owner();
    const late = acquire('e', owner);
    expect(late.state).toBe('waiting');
    supplier.grant();
    await tokens.settled();
    expect(late.state).toBe('holding');
    expect(late.token).toBe(5n);
  });
});
