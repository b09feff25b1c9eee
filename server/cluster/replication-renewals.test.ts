// Replication of resumable sessions, active side to standby side, with a recording link and fake
// clocks: the key hash rides on grants, enqueues and snapshots (never in the engine's events);
// renewals go coalesced, one line per flush with each renewed claim once, and only while a
// standby streams; the standby applies them to holders and waiters alike.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { ReplicationSink } from './replication-sink.ts';
import { HeldSlices, deliver as deliverLines, recordingLink } from '../testing/replication-wire.ts';
import { ReplicationSource } from './replication-source.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const HASH = 'd'.repeat(64);
const HASH2 = 'e'.repeat(64);

function pair() {
  const clock = new FakeClock(1_000);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  const slices = new HeldSlices();
  const source = new ReplicationSource({
    engine,
    clock,
    instanceId: 'i',
    ackTimeoutMs: 1_000,
    ceiling: () => 0n,
    failovers: () => [],
    onStreamDropped: () => {},
    schedule: slices.schedule,
  });
  const { link, lines } = recordingLink();
  source.start();
  const standbyClock = new FakeClock(50_000);
  const standby = new LockEngine(standbyClock, new BlockTokenSource(new MemoryCeilingStore()));
  const sink = new ReplicationSink(standby);
  sink.expectSnapshot('a');
  /** Runs the snapshot's slices, then applies every line sent so far to the standby, as the peer handler would. */
  const deliver = () => {
    slices.runAll();
    deliverLines(sink, 'a', lines, 1n << 60n);
  };
  return { clock, engine, source, link, lines, standbyClock, standby, sink, deliver };
}

describe('replication of resumable sessions', () => {
  it('sends renewals coalesced: one line per flush, each renewed claim once, none for seed sessions', () => {
    const { clock, engine, source, link, lines } = pair();
    source.addStandby('b', link);
    lines.length = 0;
    const seed = engine.acquire({ name: 's', owner, protocol: 'session', client: 'c', leaseMs: 1_000, waitMs: 0, sliding: true });
    const r = engine.acquire({ name: 'r', owner, protocol: 'session', client: 'c', leaseMs: 1_000, waitMs: 0, sliding: true, keyHash: HASH });
    source.flush();
    lines.length = 0;
    clock.advance(100);
    for (let i = 0; i < 5; i++) {
      engine.touch(r);
      engine.touch(seed);
    }
    source.flushRenewals();
    expect(lines).toEqual([`{"t":"renew","r":[${r.id},1000]}`]);
    source.flushRenewals();
    expect(lines).toHaveLength(1);
  });

  it('keeps no renewal list while no standby streams', () => {
    const { engine, source, link } = pair();
    const r = engine.acquire({ name: 'r', owner, protocol: 'session', client: 'c', leaseMs: 1_000, waitMs: 0, sliding: true, keyHash: HASH });
    engine.touch(r);
    expect(engine.takeRenewals()).toEqual([]);
    source.addStandby('b', link);
    engine.touch(r);
    source.removeStandby('b');
    expect(engine.takeRenewals()).toEqual([]);
  });

  it('a standby gets the key hash with the grant and the enqueue, and its leases from the renewals, never longer than the active has them', () => {
    const { clock, engine, source, link, standby, standbyClock, deliver } = pair();
    source.addStandby('b', link);
    const holder = engine.acquire({ name: 'x', owner, protocol: 'session', client: 'c', leaseMs: 2_000, waitMs: 0, sliding: true, keyHash: HASH });
    const waiter = engine.acquire({ name: 'x', owner, protocol: 'session', client: 'c', leaseMs: 3_000, waitMs: 0, sliding: true, keyHash: HASH2 });
    source.flush();
    deliver();
    expect([standby.resumableClaim(holder.id)?.keyHash, standby.resumableClaim(waiter.id)?.keyHash]).toEqual([HASH, HASH2]);
    expect(standby.resumableClaim(waiter.id)?.leaseMs).toBe(3_000);
    clock.advance(1_500);
    engine.touch(waiter);
    source.flushRenewals();
    standbyClock.advance(10); // transit
    deliver();
    // The holder's renewal of its grant went in the same batch: 2,000 ms left then, 500 now.
    expect(standby.resumableClaim(holder.id)?.expiresAt).toBeLessThanOrEqual(standbyClock.now() + 2_000);
    expect(standby.resumableClaim(waiter.id)?.expiresAt).toBe(standbyClock.now() + 3_000);
  });

  it('a standby that joins late gets every resumable claim with its key hash and lease in the snapshot', () => {
    const { clock, engine, source, link, standby, standbyClock, sink, deliver } = pair();
    sink.expectSnapshot('a');
    const holder = engine.acquire({ name: 'x', owner, protocol: 'session', client: 'c', leaseMs: 2_000, waitMs: 0, sliding: true, keyHash: HASH });
    const waiter = engine.acquire({ name: 'x', owner, protocol: 'session', client: 'c', leaseMs: 3_000, waitMs: 0, sliding: true, keyHash: HASH2 });
    engine.acquire({ name: 'x', owner, protocol: 'session', client: 'c', leaseMs: 3_000, waitMs: 0, sliding: true });
    clock.advance(1_000);
    source.addStandby('b', link);
    deliver();
    expect(standby.resumableCount).toBe(2);
    expect(standby.resumableClaim(holder.id)?.expiresAt).toBe(standbyClock.now() + 1_000);
    expect(standby.resumableClaim(waiter.id)?.expiresAt).toBe(standbyClock.now() + 2_000);
    expect(
      standby
        .lock('x')
        ?.queue()
        .map((c) => c.keyHash),
    ).toEqual([HASH2, null]);
  });
});
