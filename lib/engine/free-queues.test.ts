// A promotion's walk for free locks with a queue (engine.fileFreeQueues, grant-gate.ts) reads the
// table's object-form locks only (LockTable.objectLocks): a compact lock has nobody waiting. It
// must still find every free lock with a queue, whichever way the lock took the object form: a
// compact lock turned into objects by its first waiter, or a lock made as an object (a session
// claim, a waiter on a free name while grants are held), and none that left the table.
import { describe, expect, it } from 'vitest';
import type { Claim } from './claim.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

describe('free locks with a queue at a promotion', () => {
  it('finds a compact lock that a waiter turned into objects, among many compact ones, and hands it to the waiter', () => {
    const { engine, fixed } = engineFixture();
    const owner = new Owner();
    for (let i = 0; i < 1_000; i++) fixed(`held/${i}`, owner);
    const holder = fixed('x', owner);
    const waiter = new Owner();
    const queued = fixed('x', waiter);
    expect(queued.state).toBe('waiting');
    // Released while handovers are held (a handoff under way): free, with a queue.
    engine.holdHandovers();
    expect(engine.release('x', holder.token)).toBe('ok');
    expect(engine.lock('x')?.holder).toBeNull();
    expect(engine.fileFreeQueues()).toBe(1);
    engine.releaseHandovers();
    expect(engine.lock('x')?.holder?.id).toBe(queued.id);
    expect(waiter.granted.map((c) => c.id)).toEqual([queued.id]);
  });

  it('finds locks made as objects (session holders) left free with a queue', () => {
    const { engine, sliding } = engineFixture();
    const owner = new Owner();
    const holders: Claim[] = [];
    for (const name of ['s1', 's2', 's3']) {
      holders.push(sliding(name, owner));
      sliding(name, new Owner());
    }
    engine.holdHandovers();
    for (const h of holders.slice(0, 2)) engine.end(h);
    expect(engine.fileFreeQueues()).toBe(2);
  });

  it('counts no lock that left the table (reset), and nothing when no lock waits', () => {
    const { engine, fixed } = engineFixture();
    const owner = new Owner();
    const holder = fixed('x', owner);
    fixed('x', new Owner());
    engine.holdHandovers();
    engine.release('x', holder.token);
    expect(engine.fileFreeQueues()).toBe(1);
    engine.reset();
    expect(engine.fileFreeQueues()).toBe(0);
    engine.releaseHandovers();
    expect(fixed('y', owner).state).toBe('holding');
    expect(engine.fileFreeQueues()).toBe(0);
  });
});
