import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Claim, type ClaimOwner, LockState } from './claim.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function fill(lock: LockState, n: number): Claim[] {
  const claims: Claim[] = [];
  for (let i = 0; i < n; i++) {
    const claim = new Claim(i + 1, lock, owner, 'keyed', 'c', 1_000, false, 0, 0);
    lock.enqueue(claim);
    claims.push(claim);
  }
  return claims;
}

/** The position by walking the list: what positionOf must agree with. */
function walkPosition(lock: LockState, claim: Claim): number {
  let pos = 1;
  for (let c = lock.head; c !== null; c = c.next, pos++) if (c === claim) return pos;
  throw new Error(`claim ${claim.id} is not queued`);
}

describe('LockState queue positions', () => {
  it('numbers waiters 1..n in enqueue order', () => {
    const lock = new LockState('a');
    const claims = fill(lock, 4);
    expect(claims.map((c) => lock.positionOf(c))).toEqual([1, 2, 3, 4]);
    expect(lock.waiting).toBe(4);
  });

  it('moves everyone behind a waiter that left from the middle up by one', () => {
    const lock = new LockState('a');
    const [a, b, c, d, e] = fill(lock, 5) as [Claim, Claim, Claim, Claim, Claim];
    lock.unlink(c);
    expect([a, b, d, e].map((x) => lock.positionOf(x))).toEqual([1, 2, 3, 4]);
    lock.unlink(b);
    expect([a, d, e].map((x) => lock.positionOf(x))).toEqual([1, 2, 3]);
  });

  it('moves everyone up by one when the head leaves, even with holes behind it', () => {
    const lock = new LockState('a');
    const [a, b, c, d] = fill(lock, 4) as [Claim, Claim, Claim, Claim];
    lock.unlink(c);
    lock.unlink(a);
    expect([b, d].map((x) => lock.positionOf(x))).toEqual([1, 2]);
    lock.unlink(b);
    expect(lock.positionOf(d)).toBe(1);
    expect(lock.queue()).toEqual([d]);
  });

  it('agrees with a walk of the queue through any mix of enqueues and removals', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('enqueue' as const) }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('remove-head' as const) }),
      fc.record({ kind: fc.constant('remove-tail' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120, size: 'max' }), (ops) => {
        const lock = new LockState('a');
        const model: Claim[] = [];
        let nextId = 1;
        for (const o of ops) {
          if (o.kind === 'enqueue') {
            const claim = new Claim(nextId++, lock, owner, 'keyed', 'c', 1_000, false, 0, 0);
            lock.enqueue(claim);
            model.push(claim);
          } else if (model.length > 0) {
            const i = o.kind === 'remove-head' ? 0 : o.kind === 'remove-tail' ? model.length - 1 : o.pick % model.length;
            const [gone] = model.splice(i, 1);
            lock.unlink(gone as Claim);
          }
          expect(lock.queue()).toEqual(model);
          expect(lock.waiting).toBe(model.length);
          expect(lock.tail).toBe(model.at(-1) ?? null);
          for (const claim of model) {
            const expected = walkPosition(lock, claim);
            expect(lock.positionOf(claim)).toBe(expected);
            expect(expected).toBe(model.indexOf(claim) + 1);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('LockState under churn behind a head that stays', () => {
  it('keeps its position index bounded and right while waiters come and go from the middle', () => {
    const lock = new LockState('k');
    const [head, keeper] = fill(lock, 2) as [Claim, Claim];
    let id = 100;
    for (let round = 0; round < 10_000; round++) {
      // Two join behind the keeper; the first of them leaves from the middle, the second stays a while.
      const a = new Claim(id++, lock, owner, 'keyed', 'c', 1_000, false, 0, 0);
      const b = new Claim(id++, lock, owner, 'keyed', 'c', 1_000, false, 0, 0);
      lock.enqueue(a);
      lock.enqueue(b);
      lock.unlink(a);
      if (round % 3 === 0) lock.unlink(b);
    }
    expect(lock.holeCount).toBeLessThanOrEqual(lock.waiting + 64);
    for (const c of lock.queue()) expect(lock.positionOf(c)).toBe(walkPosition(lock, c));
    expect(lock.positionOf(head)).toBe(1);
    expect(lock.positionOf(keeper)).toBe(2);
  });
});
