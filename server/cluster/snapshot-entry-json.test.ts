// The walk writes each snapshot entry's JSON by hand (no array per entry, for the active's GC):
// the text must be exactly what JSON.stringify makes of the entry tuple the standby reads
// (lib/cluster/snapshot-entries.ts), for holders and waiters, with and without the optional
// key hash and client name, an endless or a finite wait, names that need escaping.
import { describe, expect, it } from 'vitest';
import type { Claim, ClaimOwner, LockState } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { isSnapshotHolder, isSnapshotWaiter } from '../../lib/cluster/snapshot-entries.ts';
import { holderEntry, holderJson, waiterEntry, waiterJson } from './snapshot-walk.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const HASH = 'ab'.repeat(32);

describe('a snapshot entry written by hand', () => {
  it('is the JSON of the entry tuple, for every shape a holder or waiter takes', () => {
    const clock = new FakeClock();
    const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
    const names = ['plain', 'quote"and\\back', 'uni/ü/\u0001/€'];
    for (const name of names) {
      engine.acquire({ name, owner, protocol: 'keyed', client: '10.0.0.1:5', leaseMs: 60_000, waitMs: 0, sliding: false });
      engine.acquire({ name, owner, protocol: 'keyed', client: 'c"1', leaseMs: 1_500, waitMs: 2_500, sliding: false });
      engine.acquire({ name, owner, protocol: 'session', client: '10.0.0.2:7', clientName: 'w"orker', leaseMs: 5_000, waitMs: 0, sliding: true });
    }
    clock.advance(1_234.5);
    const locks: LockState[] = [...engine.allLocks()];
    const claims: Array<[LockState, Claim]> = [];
    for (const lock of locks) for (let w = lock.head; w !== null; w = w.next) claims.push([lock, w]);
    // Resumable shapes: a key hash alone, and a key hash with a name; a name with no hash.
    const [first, second, third] = claims;
    if (first === undefined || second === undefined || third === undefined) throw new Error('expected waiters');
    first[1].keyHash = HASH;
    second[1].keyHash = HASH;
    second[1].clientName = 'named';
    third[1].clientName = 'only-a-name';
    const now = clock.now() + 0.25;
    let holders = 0;
    for (const lock of locks) {
      const h = lock.holder;
      if (h === null) continue;
      holders++;
      const text = holderJson(lock, h, now);
      expect(text).toBe(JSON.stringify(holderEntry(lock, h, now)));
      expect(isSnapshotHolder(JSON.parse(text))).toBe(true);
    }
    expect(holders).toBe(names.length);
    expect(claims.length).toBe(2 * names.length);
    for (const [lock, w] of claims) {
      const text = waiterJson(lock, w, now);
      expect(text).toBe(JSON.stringify(waiterEntry(lock, w, now)));
      expect(isSnapshotWaiter(JSON.parse(text))).toBe(true);
    }
    // A holder with a hash and a name, too.
    const h = locks[0]?.holder;
    if (h === null || h === undefined) throw new Error('expected a holder');
    h.keyHash = HASH;
    h.clientName = 'held';
    expect(holderJson(locks[0] as LockState, h, now)).toBe(JSON.stringify(holderEntry(locks[0] as LockState, h, now)));
  });
});
