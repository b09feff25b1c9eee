import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCeilingStore } from './file-ceiling-store.ts';
import { DeferredStore } from './testing/deferred-store.ts';
import { BlockTokenSource } from './token-source.ts';

const take = (source: BlockTokenSource, n: number): bigint[] => Array.from({ length: n }, () => source.next());

describe('BlockTokenSource with background reservation', () => {
  it('reserves the next block in the background at half a block, so the blocking save runs only once at start', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    expect(take(source, 5)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(store.aheadSaves).toEqual([20n]);
    store.finish();
    await source.settled();
    expect(take(source, 10)).toEqual([6n, 7n, 8n, 9n, 10n, 11n, 12n, 13n, 14n, 15n]);
    expect(store.blockingSaves).toEqual([10n]);
    expect(store.aheadSaves).toEqual([20n, 30n]);
  });

  it('falls back to a blocking save when the background one is late, and never lowers the ceiling when it lands', async () => {
    const store = new DeferredStore();
    const source = new BlockTokenSource(store, 10n);
    const first = take(source, 21);
    expect(store.blockingSaves).toEqual([10n, 20n, 30n]);
    store.finish(); // the late background save of 20 lands after the blocking one of 30
    await source.settled();
    expect(source.reservedCeiling).toBe(30n);
    const more = take(source, 10);
    const all = [...first, ...more];
    expect(all).toEqual(all.map((_, i) => BigInt(i + 1)));
    expect(more.every((t) => t <= source.reservedCeiling)).toBe(true);
  });

  it('reports a failed background save and waits for a blocking save before trying again', async () => {
    const store = new DeferredStore();
    const errors: unknown[] = [];
    const source = new BlockTokenSource(store, 10n, (err) => errors.push(err));
    take(source, 5);
    store.fail();
    await source.settled();
    expect(errors).toHaveLength(1);
    take(source, 4); // 6..9: no new background attempt after the failure
    expect(store.aheadSaves).toEqual([20n]);
    take(source, 2); // 10 from the first block, 11 after a blocking save of 20
    expect(store.blockingSaves).toEqual([10n, 20n]);
    take(source, 5); // past half of the new block: background saves resume
    expect(store.aheadSaves).toEqual([20n, 30n]);
  });
});

describe('FileCeilingStore background saves', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the larger of the blocking and the background ceilings', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-ahead-'));
    const store = new FileCeilingStore(dir);
    store.save(100n);
    await store.saveAhead(250n);
    expect(readFileSync(join(dir, 'token-ceiling.ahead'), 'utf8')).toBe('250\n');
    expect(new FileCeilingStore(dir).load()).toBe(250n);
    store.save(300n);
    expect(new FileCeilingStore(dir).load()).toBe(300n);
  });

  it('rejects a corrupt background ceiling file', () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-ahead-'));
    writeFileSync(join(dir, 'token-ceiling.ahead'), 'twelve\n');
    expect(() => new FileCeilingStore(dir).load()).toThrow(/corrupt token ceiling/);
  });

  it('never reissues a token after a restart, whichever writer reserved the last block', async () => {
    dir = mkdtempSync(join(tmpdir(), 'baton-ahead-'));
    const first = new BlockTokenSource(new FileCeilingStore(dir), 10n);
    const issued = take(first, 17); // block 10 blocking, 20 ahead (maybe), 30 ahead
    await first.settled();
    const second = new BlockTokenSource(new FileCeilingStore(dir), 10n);
    const next = second.next();
    expect(next).toBeGreaterThan(issued[issued.length - 1] as bigint);
    expect(next).toBeGreaterThan(first.reservedCeiling);
  });
});
