// The standby side of the event stream, fed by hand: a grant's handover cause is parsed like the
// event's other fields, so a cause this build does not know is a broken stream (the caller
// re-syncs), never a string put into the engine as if it were one.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../lib/engine/clock.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { ReplicationSink } from './replication-sink.ts';

function standby() {
  const engine = new LockEngine(new FakeClock(1_000), new BlockTokenSource(new MemoryCeilingStore()));
  const events: LockEvent[] = [];
  engine.subscribe((e) => events.push(e));
  return { engine, events, sink: new ReplicationSink(engine) };
}

/** A replicated grant as the active sends it (replication-source.ts), with the given handover cause. */
const grant = (cause: unknown): unknown[] => ['g', 'x', 7, '5', 'keyed', '10.0.0.2:2', 1_000, false, cause === null ? null : 12, cause];

describe('ReplicationSink handover causes', () => {
  it('applies a grant with a known handover cause, cause and all', () => {
    const { engine, events, sink } = standby();
    sink.applyBatch(1, [grant('expiry')], 1n << 60n);
    expect(engine.lock('x')?.holder?.id).toBe(7);
    expect(events).toEqual([expect.objectContaining({ type: 'grant', claimId: 7, handoverMs: 12, handoverCause: 'expiry' })]);
    expect(sink.appliedSeq).toBe(1);
  });

  it('applies a first grant, which has no handover cause', () => {
    const { events, sink } = standby();
    sink.applyBatch(1, [grant(null)], 1n << 60n);
    expect(events).toEqual([expect.objectContaining({ type: 'grant', handoverMs: null, handoverCause: null })]);
  });

  it('refuses a grant whose handover cause it does not know, as a broken stream, and applies nothing of it', () => {
    for (const bad of ['gone', 'Release', 3, {}]) {
      const { engine, events, sink } = standby();
      expect(() => sink.applyBatch(1, [grant(bad)], 1n << 60n)).toThrow('replicated event: expected a handover cause');
      expect(engine.lock('x')).toBeUndefined();
      expect(events).toEqual([]);
      expect(sink.appliedSeq).toBe(0);
    }
  });
});

describe('ReplicationSink snapshot size', () => {
  it('starts the table over made for the lock count the active announced at snapshot-begin (none from an older active)', () => {
    for (const [locks, expected] of [
      [5_000_000, 5_000_000],
      [undefined, 0],
    ] as const) {
      const { engine, sink } = standby();
      const resets: number[] = [];
      const reset = engine.reset.bind(engine);
      engine.reset = (n = 0) => {
        resets.push(n);
        reset(n);
      };
      sink.expectSnapshot('a');
      const begin = { t: 'snapshot-begin', instance: 'i-a', seq: 0, ceiling: '0', highWater: '0', ...(locks === undefined ? {} : { locks }) } as const;
      expect(sink.beginSnapshot('a', begin)).toBe(true);
      expect(resets).toEqual([expected]);
    }
  });
});
