import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { ClusterView, SnapshotMessage, StatsView } from '../../lib/ops-api/api-types.ts';
import type { DaemonFacade, FeedFacade, FeedJoin, FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { EventHub, type TimerHandle } from '../live-feed/event-hub.ts';
import { LOW_WATER_BYTES } from '../../lib/ops-api/feed-limits.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { RETRY_FRAME, eventStream, eventsRoute } from './events-route.ts';

/** A feed with only what the route uses: it keeps the subscriber so the test can play the hub. */
const bytes = (text: string) => new TextEncoder().encode(text);

class FakeFeed implements FeedFacade {
  subscriber: FeedSubscriber | null = null;
  client = '';
  readonly subscriberCount = 0;
  unsubscribed = 0;
  pulls = 0;
  refuse = false;
  subscribe(subscriber: FeedSubscriber, client: string): FeedJoin {
    if (this.refuse) return { ok: false, error: 'too-many-streams', detail: `8 already open from ${client}` };
    this.subscriber = subscriber;
    this.client = client;
    subscriber.send(bytes('event: snapshot\ndata: {"locks":[]}\n\n'));
    return { ok: true, leave: () => void this.unsubscribed++, pull: () => void this.pulls++ };
  }
}

/** Reads until `count` SSE frames (blank-line terminated blocks) have arrived. */
async function readFrames(body: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const frames = text
      .split('\n\n')
      .slice(0, -1)
      .map((f) => `${f}\n\n`);
    if (frames.length >= count) {
      reader.releaseLock();
      return frames.slice(0, count);
    }
    const { done, value } = await reader.read();
    if (done) throw new Error(`stream ended after ${frames.length} frames`);
    text += decoder.decode(value, { stream: true });
  }
}

/** The first `count` chunks as enqueued: one per frame. */
async function readChunks(body: ReadableStream<Uint8Array>, count: number): Promise<Uint8Array[]> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  while (chunks.length < count) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`stream ended after ${chunks.length} chunks`);
    chunks.push(value);
  }
  reader.releaseLock();
  return chunks;
}

function request(signal?: AbortSignal): Request {
  return new Request('http://127.0.0.1/api/v1/events', signal ? { signal } : {});
}

describe('GET /api/v1/events', () => {
  it('answers with SSE headers, then retry: 2000, then the snapshot', async () => {
    const feed = new FakeFeed();
    const res = eventStream(new AbortController().signal, feed);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    expect(await readFrames(res.body as ReadableStream<Uint8Array>, 2)).toEqual([RETRY_FRAME, 'event: snapshot\ndata: {"locks":[]}\n\n']);
  });

  it('drops a reader that never reads once more than maxBufferedBytes are queued', async () => {
    const feed = new FakeFeed();
    const res = eventStream(new AbortController().signal, feed, 'local', 1_024);
    const frame = `event: delta\ndata: ${'x'.repeat(86)}\n\n`; // 100 bytes
    const sub = feed.subscriber as FeedSubscriber;
    let accepted = 0;
    // Bounded, so a stream that never says "full" fails the assertions below instead of
    // filling the memory of the test run.
    while (accepted < 1_000 && sub.send(bytes(frame))) accepted++;
    expect(accepted).toBeLessThan(1_000);
    // retry (13 bytes) + snapshot (35) + frames: refused once the queue passed 1,024 bytes.
    expect(13 + 35 + accepted * 100).toBeGreaterThan(1_024);
    expect(13 + 35 + (accepted - 1) * 100).toBeLessThanOrEqual(1_024);
    sub.close(); // what the hub does with a subscriber whose send failed
    expect(feed.unsubscribed).toBe(1);
    await expect((res.body as ReadableStream<Uint8Array>).getReader().read()).rejects.toThrow(/fell more than 1024 bytes behind/);
  });

  it('ends the stream cleanly when the hub closes it (shutdown)', async () => {
    const feed = new FakeFeed();
    const res = eventStream(new AbortController().signal, feed);
    feed.subscriber?.close();
    expect(await res.text()).toBe(`${RETRY_FRAME}event: snapshot\ndata: {"locks":[]}\n\n`);
  });

  it('unsubscribes when the request is aborted', async () => {
    const feed = new FakeFeed();
    const abort = new AbortController();
    const res = eventStream(abort.signal, feed);
    abort.abort();
    expect(feed.unsubscribed).toBe(1);
    expect(feed.subscriber?.send(bytes('event: delta\ndata: {}\n\n'))).toBe(false);
    await res.text();
  });

  it('unsubscribes when the body is cancelled', async () => {
    const feed = new FakeFeed();
    const res = eventStream(new AbortController().signal, feed);
    await (res.body as ReadableStream<Uint8Array>).cancel();
    expect(feed.unsubscribed).toBe(1);
  });

  it('does not subscribe for a request that was aborted already', () => {
    const feed = new FakeFeed();
    const abort = new AbortController();
    abort.abort();
    eventStream(abort.signal, feed);
    expect(feed.subscriber).toBeNull();
  });

  it('refuses an anonymous reader when reads need credentials', async () => {
    const feed = new FakeFeed();
    const security = {
      readsOpen: false,
      identify: () => ({ kind: 'anonymous' as const }),
      signIn: () => null,
      signOut: () => {},
      noteFailedSignIn: () => true,
      admitSignIn: () => null,
      auditSignIn: () => true,
    };
    // The route reads only `security` and `feed`; refuseRead is typed with the whole facade.
    const res = eventsRoute(request(), { security, feed } as Pick<DaemonFacade, 'security' | 'feed'> as DaemonFacade);
    expect(res.status).toBe(401);
    expect(feed.subscriber).toBeNull();
  });

  it('streams the real hub: snapshot, then a delta after a flush, to two readers from one encoding', async () => {
    const f = engineFixture();
    const clock = { now: () => f.clock.now(), wall: (t: number) => 1_700_000_000_000 + t };
    const flushers: Array<() => void> = [];
    const deferred: Array<() => void> = [];
    const scheduler = {
      setInterval: (fn: () => void, ms: number): TimerHandle => (ms === 100 ? flushers.push(fn) : 0),
      clearInterval: () => {},
      defer: (fn: () => void) => void deferred.push(fn),
    };
    const stats = () => ({ held: f.engine.heldCount }) as StatsView;
    const cluster = () => ({ self: 'n1', nodes: [] }) as unknown as ClusterView;
    const history = new HistoryRecorder(f.engine, clock, () => clock.wall(f.clock.now()));
    const hub = new EventHub({ engine: f.engine, clock, instanceId: 'i', stats, cluster, history, audit: { subscribe: () => () => {} }, scheduler });
    const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
    f.engine.acquire({ name: 'before', owner, protocol: 'keyed', client: '10.0.0.1:1', leaseMs: 10_000, waitMs: 0, sliding: false });
    const a = eventStream(new AbortController().signal, hub).body as ReadableStream<Uint8Array>;
    const b = eventStream(new AbortController().signal, hub).body as ReadableStream<Uint8Array>;
    while (deferred.length > 0) (deferred.shift() as () => void)(); // the snapshot goes on the next turn
    f.engine.acquire({ name: 'after', owner, protocol: 'keyed', client: '10.0.0.1:1', leaseMs: 10_000, waitMs: 0, sliding: false });
    for (const flush of flushers) flush();
    const [chunksA, chunksB] = await Promise.all([readChunks(a, 3), readChunks(b, 3)]);
    // Snapshot and delta are one frame for every reader: encoded once, the same bytes queued on both streams.
    expect(chunksA[1]).toBe(chunksB[1]);
    expect(chunksA[2]).toBe(chunksB[2]);
    const [retry, snapshot, delta] = chunksA.map((c) => new TextDecoder().decode(c)) as [string, string, string];
    expect(retry).toBe(RETRY_FRAME);
    expect((JSON.parse(snapshot.slice('event: snapshot\ndata: '.length)) as SnapshotMessage).locks.map((l) => l.name)).toEqual(['before']);
    expect(delta).toMatch(/^event: delta\ndata: .*"upserts":\[\{"name":"after"/);
    hub.close();
  });
  it('answers 429 with the JSON error when the hub refuses one more stream for this client', async () => {
    const feed = new FakeFeed();
    feed.refuse = true;
    const res = eventStream(new AbortController().signal, feed, '10.1.2.3');
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: { code: 'too-many-streams', message: 'too many event streams open: 8 already open from 10.1.2.3' } });
  });

  it('passes the address the server wrote on the request to the hub', () => {
    const feed = new FakeFeed();
    const req = new Request('http://127.0.0.1/api/v1/events', { headers: { 'x-baton-client-address': '192.0.2.7' } });
    eventsRoute(req, { security: { readsOpen: true }, feed } as unknown as DaemonFacade);
    expect(feed.client).toBe('192.0.2.7');
  });

  it('tells the hub to send more only when the reader has taken what was queued (under the low-water mark)', async () => {
    const feed = new FakeFeed();
    const res = eventStream(new AbortController().signal, feed);
    const sub = feed.subscriber as FeedSubscriber;
    await Promise.resolve();
    const before = feed.pulls;
    expect(sub.send(new Uint8Array(LOW_WATER_BYTES))).toBe(true); // the queue is past the mark now
    await new Promise((r) => setImmediate(r));
    expect(feed.pulls).toBe(before);
    expect(sub.queuedBytes()).toBeGreaterThanOrEqual(LOW_WATER_BYTES);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (let i = 0; i < 3; i++) await reader.read(); // retry, snapshot, the big frame
    await new Promise((r) => setImmediate(r));
    expect(feed.pulls).toBeGreaterThan(before);
    expect(sub.queuedBytes()).toBe(0);
    expect(sub.takenBytes()).toBe(RETRY_FRAME.length + bytes('event: snapshot\ndata: {"locks":[]}\n\n').length + LOW_WATER_BYTES);
    reader.releaseLock();
  });
});
