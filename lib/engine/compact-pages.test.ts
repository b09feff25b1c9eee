// The compact holders past their first page (holder-pages.ts, slot-deadlines.ts: pages of 65,536
// slots): an engine holding more keyed locks than a page keeps each lock's holder, token and
// lease end on both sides of a page boundary, releases and takes them again there, and expires
// every one of them, in lease order, once its deadline has come.
import { describe, expect, it } from 'vitest';
import type { Claim } from './claim.ts';
import type { LockEvent } from './events.ts';
import { PAGE_ROWS } from './paged-columns.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

const LOCKS = 2 * PAGE_ROWS + 100;

describe('compact holders across pages', () => {
  it('keeps, releases, takes again and expires locks on both sides of page boundaries', () => {
    const { engine, fixed, tick } = engineFixture({ blockSize: 1_000_000n });
    const owner = new Owner();
    const claims: Claim[] = [];
    // Two lease lengths, alternating: two lanes, each in grant order across the pages.
    for (let i = 0; i < LOCKS; i++) claims.push(fixed(`p/${i}`, owner, i % 2 === 0 ? 60_000 : 90_000));
    expect(engine.heldCount).toBe(LOCKS);
    const edges = [0, 1, PAGE_ROWS - 1, PAGE_ROWS, PAGE_ROWS + 1, 2 * PAGE_ROWS - 1, 2 * PAGE_ROWS, LOCKS - 1];
    for (const i of edges) {
      const claim = claims[i] as Claim;
      const holder = engine.lock(`p/${i}`)?.holder;
      expect({ i, id: holder?.id, token: holder?.token, expiresAt: holder?.expiresAt }).toEqual({
        i,
        id: claim.id,
        token: BigInt(i + 1),
        expiresAt: 1_000 + (i % 2 === 0 ? 60_000 : 90_000),
      });
    }
    // Released at the edges, then taken again (slots reused from the free list, across pages).
    for (const i of edges) expect(engine.release(`p/${i}`, (claims[i] as Claim).token)).toBe('ok');
    expect(engine.heldCount).toBe(LOCKS - edges.length);
    tick(1_000);
    for (const i of edges) claims[i] = fixed(`p/${i}`, owner, 30_000);
    for (const i of edges) expect(engine.lock(`p/${i}`)?.holder?.token).toBe((claims[i] as Claim).token);
    // Every lease runs out: each expiry once, in deadline order (its lease end: last sign of life + lease).
    const leaseOf = new Map(claims.map((c) => [c.name, c.leaseMs]));
    const expired: string[] = [];
    let last = Number.NEGATIVE_INFINITY;
    const outOfOrder: string[] = [];
    engine.subscribe((e: LockEvent) => {
      if (e.type !== 'expire') return;
      expired.push(e.lock);
      const due = e.lastAliveAt + (leaseOf.get(e.lock) as number);
      if (due < last) outOfOrder.push(e.lock);
      last = due;
    });
    tick(30_000);
    expect(expired.length, 'the retaken ones, at 31 s').toBe(edges.length);
    tick(30_000);
    tick(30_000);
    expect(outOfOrder).toEqual([]);
    expect(new Set(expired).size).toBe(LOCKS);
    expect(engine.heldCount).toBe(0);
  });
});
