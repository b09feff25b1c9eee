// The live feed tells a page that its audit changed by the audit's position, not by the admin
// item in the 200-item feed: on a node whose role changed, the handoff entry is followed at once
// by the replay of the whole table, which pushed the item out before a delta took it, and the
// page (which re-read its audit only on an admin item) never showed its own handoff.
import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { ClusterView, DeltaMessage, SnapshotMessage, StatsView } from '../../lib/ops-api/api-types.ts';
import type { FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { AuditLog } from '../audit/audit-log.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { EventHub, type TimerHandle } from './event-hub.ts';
import { FEED_SIZE } from './feed-ring.ts';

async function setup() {
  const f = engineFixture({ blockSize: 1_000n });
  const clock = { now: () => f.clock.now(), wall: (t: number) => t };
  const audit = await AuditLog.open(null, undefined, { node: 'a', instance: 'i' });
  const intervals = new Map<number, { fn: () => void; ms: number }>();
  const deferred: Array<() => void> = [];
  let next = 1;
  const hub = new EventHub({
    engine: f.engine,
    clock,
    instanceId: 'i',
    stats: () => ({}) as StatsView,
    cluster: () => ({ nodes: [] }) as unknown as ClusterView,
    history: new HistoryRecorder(f.engine, clock, () => 0),
    audit,
    flushIntervalMs: 100,
    heartbeatMs: 500,
    scheduler: {
      setInterval: (fn, ms): TimerHandle => {
        intervals.set(next, { fn, ms });
        return next++;
      },
      clearInterval: (h) => void intervals.delete(h as number),
      defer: (fn) => void deferred.push(fn),
    },
  });
  const frames: string[] = [];
  const sub: FeedSubscriber = {
    send: (b) => frames.push(new TextDecoder().decode(b)) > 0,
    queuedBytes: () => 0,
    takenBytes: () => frames.length,
    close: () => {},
  };
  const joined = hub.subscribe(sub, '10.0.0.1');
  if (!joined.ok) throw new Error(joined.detail);
  while (deferred.length > 0) (deferred.shift() as () => void)();
  const flush = () => {
    for (const { fn, ms } of [...intervals.values()]) if (ms === 100) fn();
  };
  const messages = () =>
    frames
      .map((fr) => /^event: (\w+)\ndata: (.*)\n\n$/s.exec(fr))
      .filter((m) => m !== null)
      .map((m) => ({ event: m[1] as string, data: JSON.parse(m[2] as string) as unknown }));
  const deltas = () =>
    messages()
      .filter((m) => m.event === 'delta')
      .map((m) => m.data as DeltaMessage);
  const hold = (name: string) => f.fixed(name, { onGranted: () => true, onEnded: () => {} });
  return { audit, hub, flush, messages, deltas, hold, engine: f.engine };
}

describe('the live feed and the audit', () => {
  it('a delta says the audit moved even when more than 200 events pushed its admin item out of the feed before the flush', async () => {
    const t = await setup();
    expect((t.messages()[0]?.data as SnapshotMessage).audit).toBe(0);
    t.audit.record({ who: 'bearer:admin', action: 'handoff', target: 'b', result: 'ok', detail: null });
    for (let i = 0; i < FEED_SIZE; i++) t.engine.release(`k${i}`, t.hold(`k${i}`).token);
    t.flush();
    const [delta] = t.deltas();
    expect(delta?.feed.some((item) => item.kind === 'admin')).toBe(false);
    expect(delta?.audit).toBe(t.audit.latest);
    expect(t.audit.latest).toBe(1);
    // Nothing new in the audit: the next delta does not repeat it.
    t.hold('another');
    t.flush();
    expect(t.deltas()[1]).not.toHaveProperty('audit');
    t.hub.close();
    await t.audit.close();
  });
});
