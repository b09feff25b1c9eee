import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { HistoryRecorder } from './history-recorder.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
/** Engine time 0 is this epoch ms; the fixture's clock starts at engine time 1,000. */
const EPOCH = 1_700_000_000_000;

function setup() {
  const f = engineFixture({ blockSize: 100n });
  const clock = { wall: (engineMs: number) => EPOCH + engineMs };
  const recorder = new HistoryRecorder(f.engine, clock, () => EPOCH + f.clock.now());
  const fixed = (name: string, leaseMs = 10_000) => f.fixed(name, live, leaseMs);
  return { ...f, fixed, recorder };
}

describe('HistoryRecorder', () => {
  it('counts every grant and records handovers by cause, in the bucket of the event wall time', () => {
    const { engine, fixed, tick, recorder } = setup();
    const first = fixed('a');
    fixed('a');
    engine.release('a', first.token); // hands over at once: cause release, 0 ms
    fixed('b', 100);
    fixed('b');
    tick(150); // b's lease ends at 1,100; the timer runs at 1,150: 50 ms late
    const current = recorder.buckets().at(-1);
    expect(current?.start).toBe(EPOCH);
    expect(current).toMatchObject({ grants: 4, handovers: 2 });
    expect(recorder.grantsTotal).toBe(4);
    expect(current?.byCause.release).toEqual({ count: 1, p50: 0, p99: 0 });
    expect(current?.byCause.expiry.count).toBe(1);
    expect(current?.byCause.expiry.p50).toBeCloseTo(50, -1);
  });

  it('summarises handover latency over the asked window as of the injected wall clock', () => {
    const { engine, fixed, clock, recorder } = setup();
    const first = fixed('a');
    fixed('a');
    engine.release('a', first.token);
    expect(recorder.summary(60_000)).toEqual({ count: 1, p50: 0, p95: 0, p99: 0 });
    clock.advance(20 * 60_000);
    expect(recorder.summary(60_000).count).toBe(0);
  });

  it('reports the current bucket start and a version that moves with each change', () => {
    const { fixed, clock, recorder } = setup();
    const before = recorder.version;
    fixed('a');
    expect(recorder.version).toBeGreaterThan(before);
    expect(recorder.currentBucketStart()).toBe(EPOCH);
    clock.advance(10_000);
    expect(recorder.currentBucketStart()).toBe(EPOCH + 10_000);
    expect(recorder.changedSince(before).map((b) => b.start)).toEqual([EPOCH, EPOCH + 10_000]);
  });

  it('reads the view clock once per engine second, not per grant, and follows a wall-clock step after that', () => {
    const f = engineFixture({ blockSize: 100n });
    let step = 0;
    let reads = 0;
    const clock = {
      wall: (engineMs: number) => {
        reads++;
        return EPOCH + step + engineMs;
      },
    };
    const recorder = new HistoryRecorder(f.engine, clock, () => EPOCH + step + f.clock.now());
    for (let i = 0; i < 50; i++) f.engine.release('a', f.fixed('a', live).token);
    expect(reads).toBe(1);
    step = 60_000; // the wall clock is set a minute ahead
    f.clock.advance(1_000);
    f.fixed('b', live);
    expect(reads).toBe(2);
    expect(recorder.buckets().at(-1)).toMatchObject({ start: EPOCH + 60_000, grants: 1 });
  });

  it('stops recording after close, and close can be called twice', () => {
    const { engine, recorder } = setup();
    recorder.close();
    recorder.close();
    engine.acquire({ name: 'a', owner: live, protocol: 'keyed', client: 'k', leaseMs: 1_000, waitMs: 0, sliding: false });
    expect(recorder.version).toBe(0);
  });
});
