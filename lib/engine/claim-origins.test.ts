// Compact holders share one entry per connection and client name (claim-origins.ts); entries
// no lock uses are swept, so closed connections are let go, a bounded number of them late.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from './claim.ts';
import { ClaimOrigins } from './claim-origins.ts';

const owner = (): ClaimOwner => ({ onGranted: () => true, onEnded: () => {} });

describe('ClaimOrigins', () => {
  it('gives every lock of one connection and name the same entry, and a new name a new one', () => {
    const o = new ClaimOrigins();
    const a = owner();
    const ids = Array.from({ length: 1_000 }, () => o.take(a, '10.0.0.1:1', null));
    expect(new Set(ids).size).toBe(1);
    const named = o.take(a, '10.0.0.1:1', 'worker-1');
    expect(named).not.toBe(ids[0]);
    expect([o.owners[named], o.clients[named], o.clientNames[named]]).toEqual([a, '10.0.0.1:1', 'worker-1']);
    expect(o.size).toBe(2);
  });

  it('keeps an entry a connection takes and gives back again and again, and sweeps unused ones past the used ones', () => {
    const o = new ClaimOrigins();
    const a = owner();
    for (let i = 0; i < 1_000; i++) o.drop(o.take(a, 'a', null));
    expect(o.size).toBe(1);
    // 1,000 connections come, take one lock each, give it back and go: at most 2 x used + 64 stay.
    const held = o.take(a, 'a', null);
    for (let i = 0; i < 1_000; i++) o.drop(o.take(owner(), `c${i}`, null));
    expect(o.size).toBeLessThanOrEqual(2 + 64 + 1);
    // The entry still used is never swept.
    expect(o.owners[held]).toBe(a);
    expect(o.take(a, 'a', null)).toBe(held);
  });
});
