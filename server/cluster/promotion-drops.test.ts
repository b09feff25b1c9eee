// A promotion ends the waiters and session holders that cannot move. With the locks the
// replication stream noted (stream-claims.ts) it visits only those, not a table of millions;
// if they miss a waiter the engine counts, it walks the whole table after all.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { dropUnreplicable } from './promotion-drops.ts';
import { StreamClaims } from './stream-claims.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

/** 1,000 keyed holders; a keyed waiter on `w`; seed-protocol session holders on `s` and `hidden`. */
function table(): LockEngine {
  const engine = new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore()));
  const take = (name: string, protocol: 'keyed' | 'session', waitMs = 0) =>
    engine.acquire({ name, owner, protocol, client: '10.0.0.1:1', leaseMs: 60_000, waitMs, sliding: protocol === 'session' });
  for (let i = 0; i < 1_000; i++) take(`k/${i}`, 'keyed');
  take('w', 'keyed');
  take('w', 'keyed', 30_000);
  take('s', 'session');
  take('hidden', 'session');
  return engine;
}

describe('the claims a promotion ends', () => {
  it('visits only the noted locks when they hold every waiter', () => {
    const engine = table();
    expect(dropUnreplicable(engine, null, new Set(['w', 's', 'gone']))).toMatchObject({ waiters: 1, sessions: 1 });
    expect(engine.waiterCount).toBe(0);
    // Not noted, so not visited: the proof that the table was not walked.
    expect(engine.lock('hidden')?.holder?.protocol).toBe('session');
    expect(engine.lock('w')?.holder?.protocol, 'the keyed holder stays').toBe('keyed');
  });

  it('walks the whole table when the noted locks miss a waiter, or when there are none', () => {
    const missed = table();
    expect(dropUnreplicable(missed, null, new Set(['s']))).toMatchObject({ waiters: 1, sessions: 2 });
    const none = table();
    expect(dropUnreplicable(none, null, null)).toMatchObject({ waiters: 1, sessions: 2 });
    for (const engine of [missed, none]) {
      expect(engine.waiterCount).toBe(0);
      expect(engine.lock('hidden')?.holder ?? null).toBeNull();
    }
  });
});

describe('the locks the stream noted', () => {
  it('count only once the table has started over from the stream, and once per promotion', () => {
    const engine = table();
    const claims = new StreamClaims(engine);
    // A node that came up and served on its own: the stream never saw its table.
    claims.note('w');
    expect(claims.take(), 'no start-over yet: walk everything').toBeNull();
    claims.reset();
    claims.note('w');
    claims.note('s');
    expect([...(claims.take() ?? [])].sort()).toEqual(['s', 'w']);
    expect(claims.take(), 'after a promotion the table is this node’s own').toBeNull();
    claims.reset();
    claims.note('k/1');
    claims.settle('k/1');
    expect(claims.size, 'a lock with neither a waiter nor a session holder is forgotten').toBe(0);
  });
});
