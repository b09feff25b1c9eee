// The streamed snapshot against the active's engine under random interleavings: operations on
// the active, slices of the walk, deliveries of what the link carried so far, and re-syncs
// that start a new snapshot while one is under way. Parts are tiny (a slice of a few locks, a
// line of a few entries, so long queues are continued across lines), so every order of parts
// and events happens. Once the last part has come, the standby's table (holders with their
// tokens, queues in order) is the active's, and it stays so as the stream goes on.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { SHARD_FROM } from '../../lib/engine/lock-map.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { ReplicationSource } from './replication-source.ts';
import { ReplicationSink } from './replication-sink.ts';
import { deliver, HeldSlices, recordingLink, type Delivered } from '../testing/replication-wire.ts';
import { applyClientOp, type ClientOp } from '../testing/engine-workload.ts';

type Op = ClientOp | { kind: 'tick'; ms: number } | { kind: 'slice' | 'deliver' | 'resync' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      clientName: fc.constantFrom(null, 'worker 1@host pid 7', 'é 漢 🔒'),
      key: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
      session: fc.boolean(),
      leaseMs: fc.constantFrom(50, 200),
      waitMs: fc.constantFrom(0, 40, 150, 1000),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('release' as const, 'end' as const, 'kick' as const, 'force' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(0, 10, 60, 120) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('slice' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resync' as const) }) },
);

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function table(e: LockEngine): string[] {
  const out: string[] = [];
  for (const lock of e.allLocks()) {
    const h = lock.holder;
    const q: string[] = [];
    for (let w = lock.head; w !== null; w = w.next) q.push(`${w.id}:${w.protocol}:${w.clientName}`);
    out.push(`${lock.name} holder=${h === null ? '-' : `${h.id}/${h.token}/${h.clientName}/${h.protocol}`} queue=${q.join(',')}`);
  }
  return out.sort();
}

it('any interleaving of parts, events and re-syncs ends with the standby holding the active table', () => {
  fc.assert(
    fc.property(
      fc.array(opArb, { maxLength: 40 }),
      fc.array(opArb, { minLength: 1, maxLength: 120 }),
      fc.record({ chars: fc.integer({ min: 1, max: 600 }), lineChars: fc.integer({ min: 60, max: 400 }) }),
      fc.constantFrom('one map', 'sized', 'splits'),
      fc.integer({ min: 1, max: 8 }),
      (setup, during, budget, tables, splitAt) => {
        const clockA = new FakeClock();
        const clockB = new FakeClock();
        // 'splits': the active's table splits as it grows, at `splitAt` locks (lib/engine/lock-map.ts),
        // whenever that comes (before the walk, during it, or not at all).
        const a = new LockEngine(clockA, new BlockTokenSource(new MemoryCeilingStore(), 5n), tables === 'splits' ? { splitAt } : {});
        const b = new LockEngine(clockB, new BlockTokenSource(new MemoryCeilingStore(), 5n));
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
          walkBudget: { ms: 1_000, ...budget },
        });
        source.start();
        const sink = new ReplicationSink(b);
        const { link, lines } = recordingLink();
        if (tables === 'sized') {
          // Both tables split as for millions of locks (lib/engine/lock-map.ts: the walk's cursor
          // then goes shard by shard): the active's now, the standby's at each snapshot-begin.
          a.reset(SHARD_FROM);
          const send = link.send;
          link.send = (m) => send(m.t === 'snapshot-begin' ? { ...m, locks: SHARD_FROM } : m);
        }
        const got: Delivered = { begun: 0, parts: 0, finished: 0 };
        const run = (op: Op): void => {
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
            case 'slice':
              slices.runOne();
              break;
            case 'deliver':
              // Events of this turn go out at its end, as setImmediate would send them.
              source.flush();
              deliver(sink, 'a', lines, MAX_TOKEN, got);
              break;
            case 'resync':
              // The standby asks again: what the link still carries of the old snapshot is not kept.
              sink.expectSnapshot('a');
              source.addStandby('b', link);
              break;
          }
        };
        for (const op of setup) if (op.kind !== 'slice' && op.kind !== 'deliver' && op.kind !== 'resync') run(op);
        sink.expectSnapshot('a');
        source.addStandby('b', link);
        for (const op of during) run(op);
        // The rest of the walk, with events still coming between its slices.
        let n = 0;
        while (slices.pending > 0) {
          const op = during[n++ % during.length] as Op;
          if (op.kind !== 'resync') run(op);
          slices.runOne();
        }
        source.flush();
        deliver(sink, 'a', lines, MAX_TOKEN, got);
        expect(got.finished, 'the last snapshot ended complete').toBeGreaterThanOrEqual(1);
        expect(source.streaming('b')).toBe(true);
        expect(sink.appliedSeq).toBe(source.lastSeq);
        expect(table(b)).toEqual(table(a));
        expect([b.heldCount, b.waiterCount, b.lockCount]).toEqual([a.heldCount, a.waiterCount, a.lockCount]);
        // In sync, the stream keeps it so.
        for (const op of during) {
          if (op.kind === 'resync' || op.kind === 'slice') continue;
          run(op);
          source.flush();
          deliver(sink, 'a', lines, MAX_TOKEN, got);
          expect(table(b)).toEqual(table(a));
        }
      },
    ),
    { numRuns: 400 },
  );
});
