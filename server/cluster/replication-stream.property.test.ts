// The replication path end to end, as bytes: a random workload runs on the active's engine;
// a standby joins at a random moment (snapshot), then every batch goes through the real
// encoding (ReplicationSource), the line decoder and the ReplicationSink into a second engine.
// After every step the standby shows the same holders (claim id, token) and queues as the
// active, and its leases end no earlier. Then it is promoted and must serve on.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { ReplicationSource } from './replication-source.ts';
import { ReplicationSink } from './replication-sink.ts';
import { deliver, HeldSlices, recordingLink } from '../testing/replication-wire.ts';
import { applyClientOp, type ClientOp } from '../testing/engine-workload.ts';
import { dropUnreplicable } from './promotion-drops.ts';

type Op = ClientOp | { kind: 'tick'; ms: number } | { kind: 'join' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      clientName: fc.constantFrom(null, 'worker 1@host pid 7', 'é 漢 🔒'),
      key: fc.constantFrom('a', 'a', 'b', 'c_d'),
      session: fc.boolean(),
      leaseMs: fc.constantFrom(50, 200),
      waitMs: fc.constantFrom(0, 40, 150),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('release' as const, 'end' as const, 'kick' as const, 'force' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(0, 10, 60, 120) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'join' as const }) },
);

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function table(e: LockEngine): string[] {
  const out: string[] = [];
  for (const lock of e.allLocks()) {
    const h = lock.holder;
    const q: string[] = [];
    for (let w = lock.head; w !== null; w = w.next) q.push(`${w.id}:${w.clientName}`);
    out.push(`${lock.name} holder=${h === null ? '-' : `${h.id}/${h.token}/${h.clientName}`} queue=${q.join(',')}`);
  }
  return out.sort();
}

it('a standby fed through the wire encoding mirrors the active, and serves on after promotion', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) => {
      const clockA = new FakeClock();
      const clockB = new FakeClock();
      const a = new LockEngine(clockA, new BlockTokenSource(new MemoryCeilingStore(), 5n));
      const bTokens = new BlockTokenSource(new MemoryCeilingStore(), 5n);
      const b = new LockEngine(clockB, bTokens);
      const slices = new HeldSlices();
      const source = new ReplicationSource({
        engine: a,
        clock: clockA,
        instanceId: 'i-a',
        ackTimeoutMs: 1000,
        ceiling: () => 0n,
        failovers: () => [],
        onStreamDropped: () => {},
        schedule: slices.schedule,
      });
      source.start();
      const sink = new ReplicationSink(b);
      let joined = false;
      const { link, lines } = recordingLink();
      // The whole snapshot goes before the next operation here (snapshot-stream.property.test.ts interleaves them).
      const deliverAll = () => {
        source.flush();
        slices.runAll();
        deliver(sink, 'a', lines, MAX_TOKEN);
      };
      for (const op of ops) {
        switch (op.kind) {
          case 'acquire':
          case 'release':
          case 'end':
          case 'kick':
          case 'force':
            applyClientOp(a, owner, op);
            break;
          case 'tick':
            clockA.advance(op.ms);
            clockB.advance(op.ms);
            a.advance();
            break;
          case 'join':
            if (!joined) {
              joined = true;
              sink.expectSnapshot('a');
              source.addStandby('b', link);
            }
            break;
        }
        deliverAll();
        if (!joined) continue;
        expect(table(b)).toEqual(table(a));
        for (const lock of a.allLocks()) {
          const h = lock.holder;
          const mirrored = b.lock(lock.name)?.holder;
          if (h !== null && mirrored) expect(mirrored.expiresAt - clockB.now()).toBeGreaterThanOrEqual(h.expiresAt - clockA.now() - 1e-9);
        }
      }
      if (!joined) return;
      // Promotion (as cluster-transitions.ts does it): waiters and session holders go, the token
      // floor rises above everything replicated; keyed holders stay and can be released.
      // Only the locks the sink noted are visited (stream-claims.ts): they must cover every
      // waiter and session holder, which the checks below see on the whole table.
      const noted = sink.claims.take();
      expect(noted).not.toBeNull();
      let waiters = 0;
      for (const name of noted ?? []) for (let w = b.lock(name)?.head ?? null; w !== null; w = w.next) waiters++;
      expect(waiters, 'the noted locks hold every waiter').toBe(b.waiterCount);
      dropUnreplicable(b, null, noted);
      bTokens.raiseFloor(sink.maxToken);
      for (const lock of b.allLocks()) {
        expect(lock.head).toBeNull();
        expect(lock.holder?.protocol).toBe('keyed');
      }
      const keyed = [...b.allLocks()].map((l) => l.holder).filter((h) => h !== null);
      for (const h of keyed) expect(b.release(h.name, h.token)).toBe('ok');
      const maxToken = sink.maxToken;
      const fresh = b.acquire({ name: 'new', owner, protocol: 'keyed', client: 'c', leaseMs: 100, waitMs: 0, sliding: false });
      expect(fresh.token > maxToken).toBe(true);
    }),
    { numRuns: 300 },
  );
});
