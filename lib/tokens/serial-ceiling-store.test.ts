import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCeilingStore } from './file-ceiling-store.ts';
import { SerialCeilingStore } from './serial-ceiling-store.ts';
import { DeferredStore } from './testing/deferred-store.ts';
import { MemoryCeilingStore } from './token-source.ts';

/** Lets queued promise callbacks run. */
const drain = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('SerialCeilingStore', () => {
  let dir = '';
  afterEach(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  it('starts a background save only after the one before it has completed', async () => {
    const inner = new DeferredStore();
    const store = new SerialCeilingStore(inner);
    const first = store.saveAhead(10n);
    const second = store.saveAhead(20n);
    await drain();
    expect(inner.aheadSaves).toEqual([10n]);
    inner.finishFirst();
    await first;
    await drain();
    expect(inner.aheadSaves).toEqual([10n, 20n]);
    inner.finishFirst();
    await second;
    expect([inner.maxInFlight, store.load()]).toEqual([1, 20n]);
  });

  it('skips a queued save that a completed one already covers, so the ceiling never goes down', async () => {
    const inner = new DeferredStore();
    const store = new SerialCeilingStore(inner);
    const high = store.saveAhead(30n);
    const low = store.saveAhead(20n);
    const same = store.saveAhead(30n);
    await drain();
    inner.finishFirst();
    await Promise.all([high, low, same]);
    expect(inner.aheadSaves).toEqual([30n]);
    expect(store.load()).toBe(30n);
    expect(store.savedCeiling).toBe(30n);
  });

  it('fails only the caller whose save failed; the next one still runs', async () => {
    const inner = new DeferredStore();
    const store = new SerialCeilingStore(inner);
    const failing = store.saveAhead(10n);
    const next = store.saveAhead(10n);
    await drain();
    inner.fail();
    await expect(failing).rejects.toThrow('disk full');
    await drain();
    expect(inner.aheadSaves).toEqual([10n, 10n]); // not covered: the first never completed
    inner.finishFirst();
    await next;
    expect(store.load()).toBe(10n);
  });

  it('saves through the blocking save when the inner store has no background one, and skips covered ceilings', async () => {
    const inner = new MemoryCeilingStore(5n);
    const store = new SerialCeilingStore(inner);
    await store.saveAhead(3n);
    expect(inner.saves).toBe(0);
    await store.saveAhead(12n);
    store.save(11n);
    store.save(15n);
    expect([inner.saves, inner.load(), store.load()]).toEqual([2, 15n, 15n]);
  });

  it('keeps a file store at the highest ceiling when two writers race to save', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-serial-'));
    const store = new SerialCeilingStore(new FileCeilingStore(dir));
    // The token source reserves 200 while the replication sink records 150 the old active reported.
    await Promise.all([store.saveAhead(200n), store.saveAhead(150n), store.saveAhead(180n)]);
    await store.settled();
    expect(new FileCeilingStore(dir).load()).toBe(200n);
  });
});
