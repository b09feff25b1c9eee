import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCeilingStore } from './file-ceiling-store.ts';
import { BlockTokenSource, type CeilingStore, MAX_TOKEN, MemoryCeilingStore, TokensUnavailable } from './token-source.ts';

/** A store that remembers every ceiling it made durable, in order. */
class RecordingStore implements CeilingStore {
  readonly saved: bigint[] = [];
  failNext = false;
  constructor(private ceiling = 0n) {}
  load(): bigint {
    return this.ceiling;
  }
  save(ceiling: bigint): void {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk full');
    }
    this.saved.push(ceiling);
    this.ceiling = ceiling;
  }
}

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-tokens-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('BlockTokenSource', () => {
  it('starts at 1 on an empty store and counts up by one', () => {
    const source = new BlockTokenSource(new MemoryCeilingStore(), 10n);
    expect([source.next(), source.next(), source.next()]).toEqual([1n, 2n, 3n]);
    expect(source.highWater).toBe(3n);
  });

  it('makes a block ceiling durable before the first token of each block, once per block', () => {
    const store = new RecordingStore();
    const source = new BlockTokenSource(store, 3n);
    for (let i = 1n; i <= 7n; i++) {
      const savesBefore = store.saved.length;
      const token = source.next();
      expect(token).toBe(i);
      expect(token).toBeLessThanOrEqual(store.saved.at(-1) ?? 0n);
      // A save happens exactly when the token opens a new block: 1, 4, 7.
      expect(store.saved.length - savesBefore).toBe(i % 3n === 1n ? 1 : 0);
    }
    expect(store.saved).toEqual([3n, 6n, 9n]);
    expect(source.reservedCeiling).toBe(9n);
  });

  it('issues no token when the ceiling cannot be saved, and continues after a later save works', () => {
    const store = new RecordingStore();
    const source = new BlockTokenSource(store, 5n);
    store.failNext = true;
    expect(() => source.next()).toThrow(TokensUnavailable);
    store.failNext = true;
    try {
      source.next();
    } catch (err) {
      expect(err).toMatchObject({ reason: 'storage-unavailable', cause: new Error('disk full') });
    }
    expect(source.highWater).toBe(0n);
    expect(source.next()).toBe(1n);
    expect(store.saved).toEqual([5n]);
  });

  it('continues above the stored ceiling after a restart, skipping the unused rest of the block', () => {
    const store = new MemoryCeilingStore();
    const before = new BlockTokenSource(store, 100n);
    before.next();
    before.next();
    const after = new BlockTokenSource(store, 100n);
    expect(after.next()).toBe(101n);
  });

  it('keeps tokens above 2^53 exact', () => {
    const source = new BlockTokenSource(new MemoryCeilingStore(2n ** 53n + 5n), 2n);
    const tokens = [source.next(), source.next(), source.next()];
    expect(tokens).toEqual([2n ** 53n + 6n, 2n ** 53n + 7n, 2n ** 53n + 8n]);
    expect(tokens.map(String)).toEqual(['9007199254740998', '9007199254740999', '9007199254741000']);
  });

  it('clamps the last block to u64 and refuses to go past it', () => {
    const store = new MemoryCeilingStore(MAX_TOKEN - 2n);
    const source = new BlockTokenSource(store, 100n);
    expect(source.next()).toBe(MAX_TOKEN - 1n);
    expect(store.load()).toBe(MAX_TOKEN);
    expect(source.next()).toBe(MAX_TOKEN);
    expect(source.exhausted).toBe(true);
    expect(() => source.next()).toThrow(expect.objectContaining({ name: 'TokensUnavailable', reason: 'tokens-exhausted' }));
    expect(source.highWater).toBe(MAX_TOKEN);
  });

  it('after a failed save, fails at once without touching the disk until the retry interval has passed', () => {
    let t = 0;
    let calls = 0;
    let broken = true;
    const store: CeilingStore = {
      load: () => 0n,
      save: () => {
        calls++;
        if (broken) throw new Error('ENOSPC');
      },
    };
    const source = new BlockTokenSource(store, 10n, undefined, { now: () => t, retryMs: 1_000 });
    expect(() => source.next()).toThrow(TokensUnavailable);
    expect(calls).toBe(1);
    broken = false;
    t = 999;
    expect(() => source.next()).toThrow(expect.objectContaining({ reason: 'storage-unavailable' }));
    expect(calls).toBe(1);
    t = 1_000;
    expect(source.next()).toBe(1n);
    expect(calls).toBe(2);
  });

  it('rejects a block size below 1', () => {
    expect(() => new BlockTokenSource(new MemoryCeilingStore(), 0n)).toThrow(RangeError);
  });
});

describe('FileCeilingStore', () => {
  it('loads 0 from a fresh data dir, creating the dir', () => {
    const dir = join(dataDir(), 'nested', 'data');
    expect(new FileCeilingStore(dir).load()).toBe(0n);
    expect(existsSync(dir)).toBe(true);
  });

  it('keeps the ceiling as decimal text and leaves no temporary file behind', () => {
    const dir = dataDir();
    new FileCeilingStore(dir).save(2n ** 63n + 11n);
    expect(readFileSync(join(dir, 'token-ceiling'), 'utf8')).toBe('9223372036854775819\n');
    expect(readdirSync(dir)).toEqual(['token-ceiling']);
    expect(new FileCeilingStore(dir).load()).toBe(2n ** 63n + 11n);
  });

  it('never issues a token at or below one issued before a restart from the same data dir', () => {
    const dir = dataDir();
    const issued: bigint[] = [];
    for (let run = 0; run < 4; run++) {
      const source = new BlockTokenSource(new FileCeilingStore(dir), 3n);
      // Each run issues a different count, so restarts land mid-block and on block edges.
      for (let i = 0; i < run + 2; i++) {
        const token = source.next();
        expect(token).toBeGreaterThan(issued.at(-1) ?? 0n);
        issued.push(token);
      }
    }
    // Ceilings 3 | 6 | 9, 12 | 15, 18: each run starts above the last durable ceiling.
    expect(issued).toEqual([1n, 2n, 4n, 5n, 6n, 7n, 8n, 9n, 10n, 13n, 14n, 15n, 16n, 17n]);
  });

  it.each([
    ['text', 'twelve'],
    ['an empty file', ''],
    ['a negative number', '-5'],
    ['two numbers', '12 34'],
    ['a fraction', '1.5'],
    ['a value above u64', '18446744073709551616'],
  ])('rejects a corrupt ceiling file holding %s with an error naming the file', (_what, content) => {
    const dir = dataDir();
    writeFileSync(join(dir, 'token-ceiling'), content);
    const store = new FileCeilingStore(dir);
    expect(() => store.load()).toThrow(`corrupt token ceiling in ${join(dir, 'token-ceiling')}`);
    expect(() => new BlockTokenSource(store)).toThrow(/corrupt token ceiling/);
  });

  it('accepts the largest u64 ceiling and then has no tokens left', () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'token-ceiling'), `${MAX_TOKEN}\n`);
    const source = new BlockTokenSource(new FileCeilingStore(dir));
    expect(() => source.next()).toThrow(/exhausted/);
  });
});
