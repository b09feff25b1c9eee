import { describe, expect, it } from 'vitest';
import {
  defaultReturnHoldDownMs,
  priorityReturn,
  type ReturnCandidate,
  type SteadyRecord,
  type SteadySample,
  steadyGapMs,
  trackSteady,
} from './priority-return.ts';

const PEER_TIMEOUT_MS = 1_000;
const HEARTBEAT_MS = 200;
const ACTIVE = 'i-b';

const sample = (statusAt: number, over: Partial<SteadySample> = {}): SteadySample => ({
  instance: 'i-a',
  phase: 'standby',
  syncedWith: ACTIVE,
  alive: true,
  statusAt,
  ...over,
});

/** Runs the active's decisions every 25 ms from `from` to `to` over a peer that sends a status every HEARTBEAT_MS (or as `statusAt` says). */
function run(from: number, to: number, prev: SteadyRecord | null, statusAt: (now: number) => number, over: Partial<SteadySample> = {}): SteadyRecord | null {
  let record = prev;
  for (let now = from; now <= to; now += 25) record = trackSteady(record, sample(statusAt(now), over), ACTIVE, now, PEER_TIMEOUT_MS);
  return record;
}
const everyHeartbeat = (start: number) => (now: number) => start + Math.floor((now - start) / HEARTBEAT_MS) * HEARTBEAT_MS;

const candidate = (id: string, priority: number, over: Partial<ReturnCandidate> = {}): ReturnCandidate => ({
  id,
  priority,
  yielded: false,
  leaving: false,
  steadyMs: 60_000,
  lagEvents: 0,
  ...over,
});

describe('defaultReturnHoldDownMs', () => {
  it('is 10 peer timeouts, and never less than 10 s', () => {
    expect(defaultReturnHoldDownMs(1_000)).toBe(10_000);
    expect(defaultReturnHoldDownMs(300)).toBe(10_000);
    expect(defaultReturnHoldDownMs(2_500)).toBe(25_000);
  });
});

describe('trackSteady', () => {
  it('counts from the first status that says synced standby of this active, through regular heartbeats', () => {
    const first = trackSteady(null, sample(5_000), ACTIVE, 5_010, PEER_TIMEOUT_MS);
    expect(first).toEqual({ instance: 'i-a', since: 5_000, statusAt: 5_000 });
    const later = run(5_025, 20_000, first, everyHeartbeat(5_000));
    expect(later?.since).toBe(5_000);
  });

  it('is not steady while the peer is not a synced standby of this active, or not alive', () => {
    for (const over of [{ phase: 'syncing' as const }, { phase: 'discovering' as const }, { syncedWith: 'i-old' }, { syncedWith: null }, { alive: false }]) {
      expect(trackSteady({ instance: 'i-a', since: 0, statusAt: 4_900 }, sample(5_000, over), ACTIVE, 5_010, PEER_TIMEOUT_MS)).toBeNull();
    }
  });

  it('starts over after a freeze of the standby: silent, then back discovering and re-syncing', () => {
    let record = run(0, 8_000, null, everyHeartbeat(0));
    expect(record?.since).toBe(0);
    // Frozen at 8,000 for 1.5 s: no status; once the last one is older than the allowed gap it is not steady.
    record = run(8_025, 9_500, record, () => 8_000);
    expect(record).toBeNull();
    // It runs again: discovering, then syncing, then a synced standby again at 9,600.
    record = trackSteady(record, sample(9_520, { phase: 'discovering', syncedWith: null }), ACTIVE, 9_525, PEER_TIMEOUT_MS);
    record = trackSteady(record, sample(9_560, { phase: 'syncing', syncedWith: null }), ACTIVE, 9_575, PEER_TIMEOUT_MS);
    record = run(9_600, 15_000, record, everyHeartbeat(9_600));
    expect(record?.since).toBe(9_600);
  });

  it('starts over when two statuses were further apart than 3/4 of a peer timeout (a stall short of a freeze)', () => {
    expect(steadyGapMs(PEER_TIMEOUT_MS)).toBe(750);
    let record = run(0, 5_000, null, everyHeartbeat(0));
    // One status 800 ms after the one before (decisions kept running: the gap shows in the receipt times).
    record = trackSteady(record, sample(5_800), ACTIVE, 5_800, PEER_TIMEOUT_MS);
    expect(record?.since).toBe(5_800);
    // 700 ms apart is still steady.
    record = trackSteady(record, sample(6_500), ACTIVE, 6_500, PEER_TIMEOUT_MS);
    expect(record?.since).toBe(5_800);
  });

  it('starts over when the standby restarted (another instance), even with no gap', () => {
    const record = run(0, 5_000, null, everyHeartbeat(0));
    expect(trackSteady(record, sample(5_100, { instance: 'i-a2' }), ACTIVE, 5_100, PEER_TIMEOUT_MS)).toEqual({
      instance: 'i-a2',
      since: 5_100,
      statusAt: 5_100,
    });
  });
});

describe('priorityReturn', () => {
  it('hands back only once the highest-priority returning node has been steady for the hold-down and is caught up', () => {
    expect(priorityReturn(1, [candidate('a', 0, { steadyMs: 30 })], 10_000)).toEqual({
      kind: 'wait',
      node: 'a',
      inMs: 9_970,
      reason: 'hold-down: a node takes the role back by priority only after 10000 ms as a synced standby without a break (a: 30 ms so far)',
    });
    expect(priorityReturn(1, [candidate('a', 0, { steadyMs: 10_000 })], 10_000)).toEqual({ kind: 'handoff', to: 'a' });
    expect(priorityReturn(1, [candidate('a', 0, { steadyMs: 12_000, lagEvents: 4 })], 10_000)).toEqual({
      kind: 'wait',
      node: 'a',
      inMs: 0,
      reason: 'a is not caught up yet (replication lag 4 events)',
    });
  });

  it('ignores lower-priority, yielded, leaving and unsteady nodes', () => {
    for (const c of [candidate('c', 2), candidate('a', 0, { yielded: true }), candidate('a', 0, { leaving: true }), candidate('a', 0, { steadyMs: null })]) {
      expect(priorityReturn(1, [c], 10_000)).toEqual({ kind: 'none' });
    }
  });

  it('with the hold-down at 0, hands back as soon as the node is synced and caught up', () => {
    expect(priorityReturn(1, [candidate('a', 0, { steadyMs: 0 })], 0)).toEqual({ kind: 'handoff', to: 'a' });
  });

  it('a pause of the active, replayed on a fake clock: the successor hands back no earlier than the hold-down after the resumed node re-synced', () => {
    // b took over at 1,000 while a was frozen; a runs again at 2,500, re-syncs and says so at 2,530.
    const holdDownMs = defaultReturnHoldDownMs(PEER_TIMEOUT_MS);
    let record: SteadyRecord | null = null;
    let handedBackAt: number | null = null;
    for (let now = 2_500; now <= 20_000 && handedBackAt === null; now += 25) {
      const at = now < 2_530 ? null : everyHeartbeat(2_530)(now);
      record = at === null ? null : trackSteady(record, sample(at), ACTIVE, now, PEER_TIMEOUT_MS);
      const steadyMs = record === null ? null : now - record.since;
      if (priorityReturn(1, [candidate('a', 0, { steadyMs })], holdDownMs).kind === 'handoff') handedBackAt = now;
    }
    expect(handedBackAt).not.toBeNull();
    expect(handedBackAt).toBeGreaterThanOrEqual(2_530 + holdDownMs);
    expect(handedBackAt).toBeLessThan(2_530 + holdDownMs + 50);
  });
});
