import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { ClusterView, StatsView } from '../../lib/ops-api/api-types.ts';
import type { FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { EventHub } from './event-hub.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { clientKey } from '../console-auth/client-key.ts';
import { DEFAULT_STREAMS_PER_CLIENT, StreamLimits } from './stream-limits.ts';

const deferred: Array<() => void> = [];
function hub(maxStreams?: number) {
  const f = engineFixture();
  const clock = { now: () => f.clock.now(), wall: (t: number) => t };
  return new EventHub({
    engine: f.engine,
    clock,
    instanceId: 'i',
    stats: () => ({}) as StatsView,
    cluster: () => ({ nodes: [] }) as unknown as ClusterView,
    history: new HistoryRecorder(f.engine, clock, () => 0),
    audit: { subscribe: () => () => {} },
    scheduler: { setInterval: () => 0, clearInterval: () => {}, defer: (fn) => void deferred.push(fn) },
    ...(maxStreams === undefined ? {} : { maxStreams }),
  });
}
const reader = (): FeedSubscriber => ({ send: () => true, queuedBytes: () => 0, takenBytes: () => 0, close: () => {} });

describe('event streams per client address', () => {
  it(`takes ${DEFAULT_STREAMS_PER_CLIENT} streams from one address, refuses the next with too-many-streams, and takes one again once a stream left`, () => {
    const h = hub();
    const joins = Array.from({ length: DEFAULT_STREAMS_PER_CLIENT }, () => h.subscribe(reader(), '10.0.0.1'));
    expect(joins.every((j) => j.ok)).toBe(true);
    const refused = h.subscribe(reader(), '10.0.0.1');
    expect(refused).toEqual({
      ok: false,
      error: 'too-many-streams',
      detail: `${DEFAULT_STREAMS_PER_CLIENT} already open from 10.0.0.1; close one (a dashboard tab) first`,
    });
    expect(h.subscribe(reader(), '10.0.0.2').ok).toBe(true);
    expect(h.subscriberCount).toBe(DEFAULT_STREAMS_PER_CLIENT + 1);
    const first = joins[0];
    if (first?.ok === true) first.leave();
    expect(h.subscribe(reader(), '10.0.0.1').ok).toBe(true);
  });

  it('gives back the slot of a stream the hub cut off (a reader that could not take its snapshot)', () => {
    const h = hub();
    for (let i = 0; i < DEFAULT_STREAMS_PER_CLIENT; i++) h.subscribe({ ...reader(), send: () => false }, '10.0.0.1');
    expect(h.subscribe(reader(), '10.0.0.1').ok).toBe(false);
    while (deferred.length > 0) (deferred.shift() as () => void)(); // the snapshots go out, and fail
    expect(h.subscriberCount).toBe(0);
    expect(h.subscribe(reader(), '10.0.0.1').ok).toBe(true);
  });

  it('caps the streams of all clients together', () => {
    const h = hub(3);
    for (let i = 0; i < 3; i++) expect(h.subscribe(reader(), `10.0.0.${i}`).ok).toBe(true);
    expect(h.subscribe(reader(), '10.0.0.9')).toMatchObject({ ok: false, detail: '3 already open on this node' });
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(clientKey('127.0.0.1')).toBe('127.0.0.1');
    const limits = new StreamLimits(2, 10);
    expect(limits.take(clientKey('2001:db8:1:2::a')).ok).toBe(true);
    expect(limits.take(clientKey('2001:db8:1:2::b')).ok).toBe(true);
    expect(limits.take(clientKey('2001:db8:1:2:ffff::c')).ok).toBe(false);
    expect(limits.take(clientKey('2001:db8:1:3::a')).ok).toBe(true);
  });
});
