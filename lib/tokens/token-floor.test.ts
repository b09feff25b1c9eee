// What a node taking over as active does with its token source: it raises the floor above every
// token (and ceiling) the old active reported, and reserves a block it waits for.
import { describe, expect, it } from 'vitest';
import { DeferredStore } from './testing/deferred-store.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from './token-source.ts';

/** Lets queued promise callbacks run. */
const drain = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('BlockTokenSource.raiseFloor', () => {
  it('issues above a floor inside the reserved block without saving again', () => {
    const store = new MemoryCeilingStore();
    const source = new BlockTokenSource(store, 10n);
    expect(source.next()).toBe(1n);
    source.raiseFloor(5n);
    expect([source.next(), source.highWater, store.saves]).toEqual([6n, 6n, 1]);
  });

  it('reserves a new block first when the floor is above the reserved ceiling', () => {
    const store = new MemoryCeilingStore();
    const source = new BlockTokenSource(store, 10n);
    source.next();
    source.raiseFloor(500n);
    expect(source.reservedCeiling).toBe(500n);
    expect(source.next()).toBe(501n);
    expect([store.load(), store.saves]).toEqual([510n, 2]);
  });

  it('ignores a floor at or below the tokens already issued', () => {
    const source = new BlockTokenSource(new MemoryCeilingStore(), 10n);
    source.next();
    source.next();
    source.raiseFloor(1n);
    source.raiseFloor(0n);
    expect(source.next()).toBe(3n);
  });
});

describe('BlockTokenSource.reserveAhead', () => {
  it('reserves the next block and raises the ceiling only once the save is done', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    source.next(); // blocking save of 10
    const reserving = source.reserveAhead();
    expect(store.aheadSaves).toEqual([20n]);
    expect(source.reservedCeiling).toBe(10n);
    store.finish();
    await reserving;
    expect(source.reservedCeiling).toBe(20n);
  });

  it('reserves above a raised floor, and the tokens after it need no blocking save', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    source.raiseFloor(1_000n);
    const reserving = source.reserveAhead();
    expect(store.aheadSaves).toEqual([1_010n]);
    store.finish();
    await reserving;
    expect(source.next()).toBe(1_001n);
    expect(store.blockingSaves).toEqual([]);
  });

  it('waits for a background reservation in flight before starting its own, so saves never overlap', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    for (let i = 0; i < 5; i++) source.next(); // half the block used: background save of 20 starts
    expect(store.aheadSaves).toEqual([20n]);
    let done = false;
    const reserving = source.reserveAhead().then(() => (done = true));
    await drain();
    expect(store.aheadSaves).toEqual([20n]);
    store.finish();
    await drain();
    expect(store.aheadSaves).toEqual([20n, 30n]);
    expect(done).toBe(false);
    source.next(); // its reservation is in flight: next() must not start another one
    expect(store.maxInFlight).toBe(1);
    store.finish();
    await reserving;
    expect(source.reservedCeiling).toBe(30n);
  });

  it('rejects when the save fails, keeping the old ceiling', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    source.next();
    const reserving = source.reserveAhead();
    store.fail();
    await expect(reserving).rejects.toThrow('disk full');
    expect(source.reservedCeiling).toBe(10n);
    await source.settled();
  });

  it('uses the blocking save when the store has no background one', async () => {
    const store = new MemoryCeilingStore(40n);
    const source = new BlockTokenSource(store, 10n);
    await source.reserveAhead();
    expect([store.load(), source.reservedCeiling, store.saves]).toEqual([50n, 50n, 1]);
    expect(source.next()).toBe(41n);
  });

  it('caps the block at the largest u64 token', async () => {
    const store = new MemoryCeilingStore(MAX_TOKEN - 3n);
    const source = new BlockTokenSource(store, 10n);
    await source.reserveAhead();
    expect(store.load()).toBe(MAX_TOKEN);
    await source.reserveAhead(); // nothing left to reserve: no save
    expect(store.saves).toBe(1);
  });
});
