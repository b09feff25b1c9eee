// Streams that join at different times each start their own snapshot pass; what a loop turn
// spends on all of them together is bounded (issue 26: 100 streams reconnecting every 1.5 s
// took the lock path's p50 to 12.5 ms when each pass had a budget of its own). Counted, not
// timed: the frames built and the bytes handed out per turn of a scheduler run by hand.
import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { stats as statsView } from '../../lib/dashboard/dashboard-fixtures.ts';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import { EventHub, type Scheduler, type TimerHandle } from './event-hub.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { BUILDS_PER_TURN } from './snapshot-pass.ts';
import { TakingSink } from './testing/taking-sink.ts';

const EPOCH = 1_700_000_000_000;
const SEND_BYTES = 64 * 1024;

/** setImmediate by hand: a turn runs what was deferred before it began (what it defers runs next turn). */
class TurnScheduler implements Scheduler {
  private deferred: Array<() => void> = [];
  setInterval(): TimerHandle {
    return 0;
  }
  clearInterval(): void {}
  defer(fn: () => void): void {
    this.deferred.push(fn);
  }
  turn(): void {
    const now = this.deferred;
    this.deferred = [];
    for (const fn of now) fn();
  }
}

function setup() {
  const f = engineFixture({ blockSize: 1_000_000n });
  const owner = new Owner();
  for (let i = 0; i < 2_000; i++) f.fixed(`lock/${i}`, owner);
  const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
  const stats = () => statsView({ asOf: EPOCH, locks: f.engine.lockCount, held: f.engine.heldCount });
  const scheduler = new TurnScheduler();
  const hub = new EventHub({
    engine: f.engine,
    clock,
    instanceId: 'i',
    stats,
    cluster: () => ({ self: 'n1', nodes: [] }) as unknown as ClusterView,
    history: new HistoryRecorder(f.engine, clock, () => EPOCH),
    audit: { subscribe: () => () => {} },
    scheduler,
    chunkLocks: 20,
    chunkMs: Number.POSITIVE_INFINITY,
    headLocks: 0,
    sendBytes: SEND_BYTES,
    streamsPerClient: 1_000,
  });
  const streams: TakingSink[] = [];
  /** A stream of its own pass: it joins, and its join window ends (its header goes out) before the next one joins. */
  const join = (address: string): TakingSink => {
    const s = new TakingSink();
    const joined = hub.subscribe(s, address);
    expect(joined.ok).toBe(true);
    while (s.frames.length === 0) scheduler.turn();
    streams.push(s);
    return s;
  };
  /** One turn: the page frames built in it (each built once, shared by its pass) and the bytes handed out. */
  const turn = () => {
    const before = streams.map((s) => s.frames.length);
    scheduler.turn();
    const frames = new Set<Uint8Array>();
    let bytes = 0;
    streams.forEach((s, i) => {
      for (const frame of s.frames.slice(before[i])) {
        frames.add(frame);
        bytes += frame.byteLength;
      }
    });
    return { built: frames.size, bytes, largest: Math.max(0, ...[...frames].map((f) => f.byteLength)) };
  };
  return { streams, join, turn };
}

describe('EventHub: streams joining at different times', () => {
  it('builds one page per loop turn and hands out sendBytes, over all the passes together', () => {
    const t = setup();
    // Ten streams from ten addresses, each in a pass of its own (a reconnect storm spread over time).
    for (let i = 1; i <= 10; i++) t.join(`127.0.0.${i}`);
    for (let n = 0; n < 30; n++) {
      const { built, bytes, largest } = t.turn();
      expect(built).toBeLessThanOrEqual(BUILDS_PER_TURN);
      expect(bytes).toBeLessThanOrEqual(SEND_BYTES + largest);
    }
  });

  it('serves the passes in turn, so each stream keeps getting its table', () => {
    const t = setup();
    for (let i = 1; i <= 5; i++) t.join(`127.0.0.${i}`);
    const before = t.streams.map((s) => s.frames.length);
    for (let n = 0; n < 10; n++) t.turn();
    t.streams.forEach((s, i) => {
      expect(s.frames.length, `stream ${i}`).toBeGreaterThan(before[i] as number);
    });
  });
});
