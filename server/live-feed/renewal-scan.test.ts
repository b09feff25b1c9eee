import { describe, expect, it } from 'vitest';
import type { LockState } from '../../lib/engine/claim.ts';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { RenewalScan, SEED_SLICE } from './renewal-scan.ts';

describe('RenewalScan', () => {
  it('walks a large table in slices and then looks only at the locks held with a sliding lease', () => {
    const f = engineFixture({ blockSize: 1_000_000n });
    const owner = new Owner();
    for (let i = 0; i < 10_000; i++) f.fixed(`keyed/${i}`, owner);
    const session = f.sliding('session/old', owner, 3_000);
    let walked = 0;
    const table = f.engine.allLocks();
    const counting: Iterator<LockState> = {
      next: () => {
        const n = table.next();
        if (n.done !== true) walked++;
        return n;
      },
    };
    const scan = new RenewalScan();
    scan.reset(counting);
    let lookups = 0;
    const lookup = (name: string) => {
      lookups++;
      return f.engine.lock(name);
    };
    const renewed: string[] = [];
    scan.scan(lookup, (n) => renewed.push(n));
    expect(walked).toBe(SEED_SLICE);
    for (let i = 0; i < 10; i++) scan.scan(lookup, (n) => renewed.push(n));
    expect(walked).toBe(10_001);
    // A session granted while the scan runs is learnt from its grant event.
    const fresh = f.sliding('session/new', owner, 3_000);
    scan.noteGrant('session/new');
    scan.scan(lookup, (n) => renewed.push(n));
    f.clock.advance(1_000);
    f.engine.touch(session);
    f.engine.touch(fresh);
    lookups = 0;
    scan.scan(lookup, (n) => renewed.push(n));
    expect(renewed.sort()).toEqual(['session/new', 'session/old']);
    expect(lookups).toBe(2);
  });
});
