// What a standby records from the replicated stream is what a new active shows after a handoff
// (issue 30: "21% of 25,236 grants queued", really about 100%, and an expiry-blocked p50 of 0,
// really 3.1 s): a replicated waiter's grant must carry its wait, and a replicated expiry the
// silent holder's last sign of life.
import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { ReplicaGrant } from '../../lib/engine/replica-ops.ts';
import { HistoryRecorder } from './history-recorder.ts';

const EPOCH = 1_700_000_000_000;

/** A histogram figure: within the 5% the charts promise (log-histogram.ts). */
function expectNear(value: number | null | undefined, expected: number): void {
  expect(value).not.toBeNull();
  expect(Math.abs((value ?? 0) - expected)).toBeLessThanOrEqual(expected * 0.05);
}

function standby() {
  const f = engineFixture({ blockSize: 100n });
  const recorder = new HistoryRecorder(f.engine, { wall: (ms) => EPOCH + ms }, () => EPOCH + f.clock.now());
  let nextId = 1;
  const enqueue = (lock: string) => {
    const claimId = nextId++;
    f.engine.replicaEnqueue({ lock, claimId, protocol: 'keyed', client: 'k', leaseMs: 0, sliding: false, waitingForMs: 0, waitRemainingMs: null });
    return claimId;
  };
  const grant = (lock: string, claimId: number, more: Partial<ReplicaGrant> = {}) =>
    f.engine.replicaGrant({
      lock,
      claimId,
      token: BigInt(claimId),
      protocol: 'keyed',
      client: 'k',
      leaseMs: 5_000,
      sliding: false,
      remainingMs: 5_000,
      heldForMs: 0,
      handoverMs: 0,
      handoverCause: 'release',
      ...more,
    });
  return { ...f, recorder, enqueue, grant, newId: () => nextId++ };
}

describe('a standby’s history of replicated grants', () => {
  it('counts a replicated waiter’s grant as queued, with the time it waited here', () => {
    const s = standby();
    let holder = s.newId();
    s.grant('a', holder, { handoverMs: null, handoverCause: null });
    const waiters = [s.enqueue('a'), s.enqueue('a'), s.enqueue('a')];
    for (const id of waiters) {
      s.clock.advance(400);
      s.engine.replicaEndHolder('a', holder, 'release');
      s.grant('a', id);
      holder = id;
    }
    const figures = s.recorder.range('5m').summary.queueWait;
    expect(figures.count).toBe(4);
    // Every waiter queued: three of four grants (the first found the lock free).
    expect(figures.waited).toBe(3);
    expectNear(figures.waitedP50, 800);
    expectNear(figures.waitedP99, 1_200);
    const history = s.recorder.lockHistory('a').grants;
    expect(history.map((g) => g.queueWaitMs)).toEqual([800, 400, 0]);
  });

  it('counts an expiry’s blocked time from the silent holder’s last sign of life, not 0', () => {
    const s = standby();
    const holder = s.newId();
    s.grant('a', holder, { handoverMs: null, handoverCause: null, leaseMs: 3_000, remainingMs: 3_000 });
    const waiter = s.enqueue('a');
    s.clock.advance(3_001); // the active's lease ends; its expiry reaches this node
    s.engine.replicaEndHolder('a', holder, 'expire');
    s.grant('a', waiter, { handoverMs: 1, handoverCause: 'expiry' });
    const blocked = s.recorder.range('5m').summary.blocked.expiry;
    expect(blocked.count).toBe(1);
    expectNear(blocked.p50, 3_000);
  });

  it('takes a sliding lease’s end from the active’s expiry when its heartbeats were not replicated', () => {
    const s = standby();
    const holder = s.newId();
    s.grant('a', holder, { protocol: 'session', sliding: true, handoverMs: null, handoverCause: null, leaseMs: 2_000, remainingMs: 2_000 });
    const waiter = s.enqueue('a');
    s.clock.advance(7_000); // the active saw heartbeats for 5 s, then 2 s of silence, and expired it
    s.engine.replicaEndHolder('a', holder, 'expire');
    s.grant('a', waiter, { handoverMs: 1, handoverCause: 'expiry' });
    // Silent from 5 s (the expiry minus the lease), after the waiter came: blocked 2 s, not 7.
    expectNear(s.recorder.range('5m').summary.blocked.expiry.p50, 2_000);
  });
});
