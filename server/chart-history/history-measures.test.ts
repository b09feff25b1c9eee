// What the charts measure, from the engine's events on a fake clock (history-recorder.ts).
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { HistoryRecorder } from './history-recorder.ts';
import { RELATIVE_ERROR } from './log-histogram.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const EPOCH = 1_700_000_000_000;

function setup() {
  const f = engineFixture({ blockSize: 100n });
  const recorder = new HistoryRecorder(f.engine, { wall: (ms: number) => EPOCH + ms }, () => EPOCH + f.clock.now());
  const fixed = (name: string, leaseMs = 10_000) => f.fixed(name, live, leaseMs);
  return { ...f, fixed, recorder };
}

function expectNear(got: number | null | undefined, want: number): void {
  expect(got).toBeTypeOf('number');
  expect(Math.abs((got ?? 0) - want)).toBeLessThanOrEqual(want * RELATIVE_ERROR);
}

describe('chart measures', () => {
  it("counts an expiry's blocked time from the silent holder's last sign of life, not the timer's lateness", () => {
    const { sliding, engine, clock, recorder } = setup();
    const holder = sliding('a', live, 2_000);
    clock.advance(500);
    engine.touch(holder); // last sign of life at engine 1,500: the lease ends at 3,500
    clock.advance(100);
    sliding('a', live, 60_000); // the waiter arrives at 1,600
    clock.advance(1_950); // the timer fires at 3,550, 50 ms late
    engine.advance();
    const s = recorder.range('5m').summary;
    // The waiter stood behind a dead holder from 1,600 (it came after the last sign of life) to 3,550.
    expectNear(s.blocked.expiry.p50, 1_950);
    // The in-daemon handover is only the timer's lateness.
    expectNear(s.handover.expiry.p50, 50);
  });

  it('counts from the last sign of life when the waiter was already there', () => {
    const { fixed, tick, recorder } = setup();
    fixed('a', 1_000); // a fixed lease: last sign of life is its grant, at 1,000
    tick(10);
    fixed('a'); // waiting since 1,010
    tick(1_000); // the lease ended at 2,000; the timer runs at 2,010
    // The waiter waited 1,000 ms; the lock stood with a silent holder for all of it.
    expectNear(recorder.range('5m').summary.blocked.expiry.p50, 1_000);
  });

  it('records queue wait for every grant and hold time at every end', () => {
    const { fixed, engine, clock, recorder } = setup();
    const first = fixed('a');
    fixed('a');
    clock.advance(300);
    engine.release('a', first.token); // held 300; the waiter waited 300
    const s = recorder.range('5m').summary;
    expect(s.queueWait).toMatchObject({ count: 2, waited: 1 });
    expectNear(s.queueWait.waitedP50, 300);
    expect(s.hold.count).toBe(1);
    expectNear(s.hold.p50, 300);
    expect(s.blocked.release).toEqual({ count: 1, p50: 0, p99: 0 });
  });

  it("lists a lock's ended grants with how each ended, and keeps them once the lock is idle", () => {
    const { fixed, engine, clock, tick, recorder } = setup();
    const a = fixed('a', 100);
    const b = fixed('a');
    tick(100); // a expires, b is granted
    clock.advance(20);
    engine.forceRelease('a', b.token);
    const c = fixed('a');
    engine.release('a', c.token);
    expect(engine.lock('a')).toBeUndefined();
    const h = recorder.lockHistory('a');
    expect(h.grants.map((g) => [g.claimId, g.end])).toEqual([
      [String(c.id), 'release'],
      [String(b.id), 'force-release'],
      [String(a.id), 'expiry'],
    ]);
    expect(h.grants[2]).toMatchObject({ token: a.token.toString(), grantedAt: EPOCH + 1_000, heldMs: 100, client: 'k', clientName: null });
    expect(h.grants[1]).toMatchObject({ queueWaitMs: 100, heldMs: 20 });
  });

  it('lists a kicked waiter, and ends the open grant as failover when the engine state is replaced', () => {
    const { fixed, engine, clock, recorder } = setup();
    const holder = fixed('a');
    const waiter = fixed('a');
    clock.advance(30);
    engine.kick('a', waiter.id);
    clock.advance(70);
    engine.reset(); // this node stopped serving: its state is gone
    expect(recorder.lockHistory('a').grants).toEqual([
      expect.objectContaining({ claimId: String(holder.id), end: 'failover', heldMs: 100 }),
      expect.objectContaining({ claimId: String(waiter.id), end: 'kick', token: null, heldMs: null, queueWaitMs: 30 }),
    ]);
  });

  it('serves 1 h in 10 s buckets and 24 h in 5 min buckets', () => {
    const { recorder } = setup();
    expect(recorder.range('1h')).toMatchObject({ range: '1h', bucketMs: 10_000 });
    expect(recorder.range('1h').buckets).toHaveLength(360);
    expect(recorder.range('24h').buckets).toHaveLength(288);
    expect(recorder.range('24h').bucketMs).toBe(300_000);
    expect(recorder.buckets()).toHaveLength(30);
  });
});
