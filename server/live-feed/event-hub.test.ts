import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import {
  type AuditEntry,
  type ClusterView,
  type CoordinationView,
  type DeltaMessage,
  type LocksChunkMessage,
  noHandoversByCause,
  type SnapshotMessage,
  type StatsView,
} from '../../lib/ops-api/api-types.ts';
import type { FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { EventHub, HEARTBEAT_FRAME, MAX_DIRTY, type Scheduler, type TimerHandle } from './event-hub.ts';
import { FEED_SIZE } from './feed-ring.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { coordinationView } from '../../lib/ops-api/testing/coordination-fixture.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const EPOCH = 1_700_000_000_000;
const FLUSH_MS = 100;
const HEARTBEAT_MS = 15_000;

/** Intervals and deferred work that run only when the test fires them. */
class ManualScheduler implements Scheduler {
  private next = 1;
  readonly intervals = new Map<number, { fn: () => void; ms: number }>();
  readonly deferred: Array<() => void> = [];
  defer(fn: () => void): void {
    this.deferred.push(fn);
  }
  /** Runs deferred work (and what it defers in turn) until none is left. */
  settle(): void {
    for (let i = 0; i < 10_000 && this.deferred.length > 0; i++) (this.deferred.shift() as () => void)();
  }
  setInterval(fn: () => void, ms: number): TimerHandle {
    const id = this.next++;
    this.intervals.set(id, { fn, ms });
    return id;
  }
  clearInterval(handle: TimerHandle): void {
    if (typeof handle === 'number') this.intervals.delete(handle);
  }
  /** Runs every interval with period `ms` once. */
  fire(ms: number): void {
    for (const { fn, ms: period } of [...this.intervals.values()]) if (period === ms) fn();
  }
}

class Recorder implements FeedSubscriber {
  readonly frames: string[] = [];
  closed = 0;
  constructor(public accept = true) {}
  send(frame: Uint8Array): boolean {
    if (!this.accept) return false;
    this.frames.push(new TextDecoder().decode(frame));
    return true;
  }
  /** A reader that takes everything at once. */
  queuedBytes(): number {
    return 0;
  }
  takenBytes(): number {
    return this.frames.length;
  }
  close(): void {
    this.closed++;
  }
  messages(): Array<{ event: string; data: unknown }> {
    return this.frames
      .filter((f) => f !== HEARTBEAT_FRAME)
      .map((f) => {
        const m = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(f);
        if (m === null) throw new Error(`not an SSE message: ${JSON.stringify(f)}`);
        return { event: m[1] as string, data: JSON.parse(m[2] as string) as unknown };
      });
  }
  deltas(): DeltaMessage[] {
    return this.messages()
      .filter((m) => m.event === 'delta')
      .map((m) => m.data as DeltaMessage);
  }
  snapshot(): SnapshotMessage {
    const first = this.messages()[0];
    if (first?.event !== 'snapshot') throw new Error('the first message is not a snapshot');
    return first.data as SnapshotMessage;
  }
}

function setup() {
  const f = engineFixture({ blockSize: 1_000n });
  const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
  // Counts the hub's engine listeners, to show it lets go when the dashboard closes.
  let listeners = 0;
  const engine: Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock' | 'lockCount'> = {
    subscribe(listener) {
      listeners++;
      const stop = f.engine.subscribe(listener);
      return () => {
        listeners--;
        stop();
      };
    },
    allLocks: () => f.engine.allLocks(),
    lock: (name) => f.engine.lock(name),
    get lockCount() {
      return f.engine.lockCount;
    },
  };
  const history = new HistoryRecorder(f.engine, clock, () => EPOCH + f.clock.now());
  const auditListeners = new Set<(e: AuditEntry) => void>();
  const audit = {
    subscribe(listener: (e: AuditEntry) => void) {
      auditListeners.add(listener);
      return () => auditListeners.delete(listener);
    },
    emit: (e: AuditEntry) => {
      for (const l of auditListeners) l(e);
    },
  };
  const state = {
    role: 'active' as 'active' | 'standby',
    cluster: { nodes: 1 },
    /** The etcd mode's view as of a clock reading; the default mode without it. */
    coordination: undefined as ((now: number) => CoordinationView) | undefined,
  };
  const stats = (): StatsView => ({
    asOf: EPOCH + f.clock.now(),
    state: 'serving',
    role: state.role,
    locks: f.engine.lockCount,
    held: f.engine.heldCount,
    waiters: f.engine.waiterCount,
    connections: { keyed: 0, session: 0 },
    tokenHighWater: f.engine.tokenHighWater.toString(),
    grants: f.engine.grantRefusal() ?? 'ok',
    grantsTotal: 0,
    handover: { count: 0, p50: null, p99: null, p95: null },
    handoverByCause: noHandoversByCause(),
  });
  // This node's lastSeen is "now", as SingleNodeCluster reports it: it moves with every read.
  const cluster = (): ClusterView => ({
    self: 'n1',
    instanceId: 'i-1',
    clustered: false,
    phase: 'active',
    active: 'n1',
    restore: { available: false, yielded: [] },
    nodes: [
      {
        id: 'n1',
        role: 'active',
        priority: 0,
        self: true,
        alive: true,
        lastSeen: EPOCH + f.clock.now(),
        replicationLag: null,
        inSync: true,
        yielded: false,
        lockAddress: '127.0.0.1:7070',
        sessionAddress: '127.0.0.1:7071',
        httpAddress: '127.0.0.1:3000',
      },
    ],
    handoff: { available: false, reason: `nodes ${state.cluster.nodes}`, targets: [] },
    failovers: [],
    ...(state.coordination === undefined ? {} : { coordination: state.coordination(f.clock.now()) }),
  });
  const scheduler = new ManualScheduler();
  const hub = new EventHub({
    engine,
    clock,
    instanceId: 'i-1',
    stats,
    cluster,
    history,
    audit,
    scheduler,
    flushIntervalMs: FLUSH_MS,
    heartbeatMs: HEARTBEAT_MS,
  });
  const hold = (name: string) => f.engine.acquire({ name, owner: live, protocol: 'keyed', client: '10.0.0.1:1', leaseMs: 10_000, waitMs: 0, sliding: false });
  const flush = () => scheduler.fire(FLUSH_MS);
  /** Subscribes and lets the hub send the snapshot (it goes on the next turn of the loop). */
  const join = (sub: FeedSubscriber, client = '10.0.0.9') => {
    const joined = hub.subscribe(sub, client);
    scheduler.settle();
    if (!joined.ok) throw new Error(joined.detail);
    return joined.leave;
  };
  return { ...f, hub, scheduler, audit, state, hold, flush, join, listeners: () => listeners };
}

describe('EventHub', () => {
  it('sends a new subscriber a snapshot of the current locks, stats, cluster, history and feed at once', () => {
    const { join, hold } = setup();
    const claim = hold('orders');
    const sub = new Recorder();
    join(sub);
    expect(sub.frames).toHaveLength(1);
    expect(sub.frames[0]).toMatch(/^event: snapshot\ndata: \{.*\}\n\n$/s);
    const snap = sub.snapshot();
    expect(snap.instanceId).toBe('i-1');
    expect(snap.locks).toEqual([
      expect.objectContaining({ name: 'orders', queueLength: 0, holder: expect.objectContaining({ token: claim.token.toString() }) }),
    ]);
    expect(snap.stats.held).toBe(1);
    expect(snap.cluster.self).toBe('n1');
    expect(snap.history).toHaveLength(30);
    expect(snap.feed).toEqual([{ seq: 1, at: EPOCH + 1_000, kind: 'grant', lock: 'orders', text: `granted to 10.0.0.1:1 (keyed) token ${claim.token}` }]);
  });

  it('coalesces 1000 grants and releases between two flushes into exactly one delta', () => {
    const { join, engine, hold, flush } = setup();
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 1000; i++) engine.release(`k${i % 10}`, hold(`k${i % 10}`).token);
    hold('stays');
    flush();
    flush();
    const deltas = sub.deltas();
    expect(deltas).toHaveLength(1);
    const delta = deltas[0] as DeltaMessage;
    expect(delta.removed.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
    expect(delta.upserts.map((l) => l.name)).toEqual(['stays']);
    expect(delta.feed).toHaveLength(FEED_SIZE);
    expect(delta.feed.at(-1)?.text).toMatch(/^granted to 10\.0\.0\.1:1 \(keyed\) token \d+$/);
    expect(delta.history.at(-1)?.grants).toBe(1001);
  });

  it('reports a session lease renewed by a heartbeat within a scan period, and not a lease that stood still', () => {
    const { join, engine, hold, flush, clock } = setup();
    const session = engine.acquire({ name: 'heartbeating', owner: live, protocol: 'session', client: '10.0.0.2:2', leaseMs: 3_000, waitMs: 0, sliding: true });
    hold('fixed');
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 10; i++) flush(); // the first scan only notes the lease ends
    clock.advance(1_000);
    engine.touch(session); // a heartbeat: the lease end moves 1 s on, without an event
    for (let i = 0; i < 3; i++) flush(); // 300 ms: one scan period
    const upserts = sub.deltas().flatMap((d) => d.upserts);
    expect(upserts.map((u) => u.name)).toEqual(['heartbeating']);
    expect(upserts[0]?.holder?.leaseRemainingMs).toBe(3_000);
    for (let i = 0; i < 10; i++) flush(); // no heartbeat since: nothing more to say
    expect(sub.deltas().flatMap((d) => d.upserts)).toHaveLength(1);
  });

  it('flushes every 100 ms and sends heartbeats every 500 ms unless told otherwise', () => {
    const f = engineFixture();
    const scheduler = new ManualScheduler();
    const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
    const hub = new EventHub({
      engine: f.engine,
      clock,
      instanceId: 'i',
      scheduler,
      // Only the timers matter here; the snapshot just has to build.
      stats: () => ({ asOf: 0 }) as StatsView,
      cluster: () => ({
        self: 'n',
        instanceId: 'i',
        clustered: false,
        phase: 'active',
        active: 'n',
        restore: { available: false, yielded: [] },
        nodes: [],
        handoff: { available: false, reason: null, targets: [] },
        failovers: [],
      }),
      history: new HistoryRecorder(f.engine, clock, () => EPOCH),
      audit: { subscribe: () => () => {} },
    });
    hub.subscribe(new Recorder(), 'c');
    expect([...scheduler.intervals.values()].map((i) => i.ms).sort((a, b) => a - b)).toEqual([100, 500]);
  });

  it('sends no delta when nothing changed', () => {
    const { join, hold, flush, clock } = setup();
    hold('a');
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 5; i++) {
      clock.advance(1); // stats.asOf moves; no figure does
      flush();
    }
    expect(sub.frames).toHaveLength(1);
  });

  it('lists a lock that went idle under removed, and a changed one under upserts', () => {
    const { join, engine, hold, flush } = setup();
    const a = hold('a');
    const sub = new Recorder();
    join(sub);
    engine.release('a', a.token);
    hold('b');
    flush();
    const [delta] = sub.deltas();
    expect(delta?.removed).toEqual(['a']);
    expect(delta?.upserts).toEqual([expect.objectContaining({ name: 'b', queueLength: 0 })]);
    expect(delta?.feed.map((i) => i.kind)).toEqual(['release', 'grant']);
  });

  it('closes and drops a subscriber whose send fails while the others keep receiving', () => {
    const { hub, join, hold, flush } = setup();
    const slow = new Recorder();
    const fast = new Recorder();
    join(slow);
    join(fast);
    slow.accept = false;
    hold('a');
    flush();
    expect(slow.closed).toBe(1);
    expect(hub.subscriberCount).toBe(1);
    slow.accept = true;
    hold('b');
    flush();
    expect(slow.frames).toHaveLength(1);
    expect(fast.deltas()).toHaveLength(2);
  });

  it('refuses a subscriber that cannot take its snapshot', () => {
    const { hub, join, listeners, scheduler } = setup();
    const sub = new Recorder(false);
    join(sub);
    expect(sub.closed).toBe(1);
    expect(hub.subscriberCount).toBe(0);
    expect(listeners()).toBe(1);
    expect(scheduler.intervals.size).toBe(0);
  });

  it('sends a heartbeat as a named ping event, which a page script can see (a comment it could not)', () => {
    expect(HEARTBEAT_FRAME).toBe('event: ping\ndata: 1\n\n');
  });

  it('sends a heartbeat to every subscriber each heartbeat interval', () => {
    const { join, scheduler } = setup();
    const a = new Recorder();
    const b = new Recorder();
    join(a);
    join(b);
    scheduler.fire(HEARTBEAT_MS);
    expect(a.frames.slice(1)).toEqual([HEARTBEAT_FRAME]);
    expect(b.frames.slice(1)).toEqual([HEARTBEAT_FRAME]);
  });

  it('gives a reconnecting subscriber a fresh snapshot', () => {
    const { join, hold } = setup();
    const first = new Recorder();
    const unsubscribe = join(first);
    unsubscribe();
    hold('while-away');
    const again = new Recorder();
    join(again);
    expect(again.snapshot().locks.map((l) => l.name)).toEqual(['while-away']);
    expect(first.frames).toHaveLength(1);
    expect(first.closed).toBe(0);
  });

  it('keeps the last 200 feed items even with no subscriber, with consecutive seqs', () => {
    const { join, engine, hold } = setup();
    for (let i = 0; i < 150; i++) engine.release('a', hold('a').token);
    const sub = new Recorder();
    join(sub);
    const feed = sub.snapshot().feed;
    expect(feed).toHaveLength(FEED_SIZE);
    expect(feed.map((i) => i.seq)).toEqual(Array.from({ length: FEED_SIZE }, (_, i) => 300 - FEED_SIZE + 1 + i));
    expect(feed.at(-1)).toMatchObject({ kind: 'release', lock: 'a', text: expect.stringMatching(/^released, token \d+$/) });
  });

  it('describes handovers with their latency and cause', () => {
    const { join, engine, hold } = setup();
    const first = hold('a');
    hold('a');
    engine.release('a', first.token);
    const sub = new Recorder();
    join(sub);
    expect(sub.snapshot().feed.map((i) => i.text)).toEqual([
      `granted to 10.0.0.1:1 (keyed) token ${first.token}`,
      '10.0.0.1:1 (keyed) queued at position 1',
      `released, token ${first.token}`,
      `granted to 10.0.0.1:1 (keyed) token ${first.token + 1n} after 0 ms (release)`,
    ]);
  });

  it('turns audit entries into admin feed items', () => {
    const { join, audit, flush } = setup();
    const sub = new Recorder();
    join(sub);
    audit.emit({ at: EPOCH + 5, who: 'session:ab12cd34', action: 'force-release', target: 'orders', result: 'ok', detail: null });
    flush();
    expect(sub.deltas()[0]?.feed).toEqual([{ seq: 1, at: EPOCH + 5, kind: 'admin', lock: 'orders', text: 'force-release of orders by session:ab12cd34: ok' }]);
  });

  it('sends a delta when only the stats or the cluster changed, with the cluster only when it did', () => {
    const { join, state, flush } = setup();
    const sub = new Recorder();
    join(sub);
    state.role = 'standby';
    flush();
    state.cluster.nodes = 2;
    flush();
    const [statsOnly, clusterToo] = sub.deltas();
    expect(statsOnly).toMatchObject({ upserts: [], removed: [], feed: [], history: [], cluster: null, stats: { role: 'standby' } });
    expect(clusterToo?.cluster?.handoff.reason).toBe('nodes 2');
  });

  it('sends the new current history bucket when the 10-second bucket rolls over', () => {
    const { join, clock, flush } = setup();
    const sub = new Recorder();
    join(sub);
    clock.advance(10_000);
    flush();
    expect(sub.deltas()[0]?.history.map((b) => b.start)).toEqual([EPOCH + 10_000]);
  });

  it('stops listening to the engine and its timers when the last subscriber leaves', () => {
    const { join, listeners, scheduler } = setup();
    expect(listeners()).toBe(1); // the feed ring, always
    const leaveA = join(new Recorder());
    const leaveB = join(new Recorder());
    expect(listeners()).toBe(2);
    expect(scheduler.intervals.size).toBe(2);
    leaveA();
    expect(listeners()).toBe(2);
    leaveB();
    expect(listeners()).toBe(1);
    expect(scheduler.intervals.size).toBe(0);
  });

  it('closes every subscriber on close and refuses new ones', () => {
    const { hub, join, listeners } = setup();
    const sub = new Recorder();
    join(sub);
    hub.close();
    hub.close();
    expect(sub.closed).toBe(1);
    expect(listeners()).toBe(0);
    const late = new Recorder();
    join(late);
    expect(late.frames).toEqual([]);
    expect(late.closed).toBe(1);
  });

  it("sends an idle dashboard no delta although this node's lastSeen moves with the clock", () => {
    const { join, flush, clock } = setup();
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 5; i++) {
      clock.advance(50);
      flush();
    }
    expect(sub.frames).toHaveLength(1);
  });

  it('in the etcd mode sends no delta while only the grant time left and the check ages run, and one when a keep-alive or a probe moves them', () => {
    const { join, flush, clock, state } = setup();
    // The view as the node computes it: a bound and check times fixed until a keep-alive or a probe.
    const moments = { permittedUntil: 2_900, checkedAt: 900 };
    state.coordination = (now) =>
      coordinationView({
        lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: Math.max(0, Math.round(moments.permittedUntil - now)) },
        endpoints: [{ endpoint: 'http://e0', healthy: true, lastError: null, checkedAgoMs: Math.round(now - moments.checkedAt) }],
      });
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 5; i++) {
      clock.advance(50);
      flush();
    }
    expect(sub.frames).toHaveLength(1);
    // A keep-alive: the bound moves by a third of the TTL.
    moments.permittedUntil += 667;
    flush();
    expect(sub.deltas().map((d) => d.cluster?.coordination?.lease.grantRemainingMs)).toEqual([moments.permittedUntil - clock.now()]);
    // A probe: the check time moves.
    moments.checkedAt = clock.now();
    flush();
    expect(sub.deltas().at(-1)?.cluster?.coordination?.endpoints[0]?.checkedAgoMs).toBe(0);
    // A permission that ran out stays at 0: no delta for it either.
    moments.permittedUntil = clock.now() - 10;
    flush();
    const sent = sub.frames.length;
    clock.advance(300);
    flush();
    expect(sub.frames).toHaveLength(sent);
  });

  it("sends no delta while a clean stop's quiet period only counts down, and one when it ends", () => {
    const { join, flush, clock, state } = setup();
    const quiet = { until: 9_000 as number | null };
    state.coordination = (now) =>
      coordinationView({
        holding: false,
        holder: null,
        endpoints: [],
        lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: null },
        quiet: quiet.until === null ? null : { by: 'a', remainingMs: Math.max(0, Math.round(quiet.until - now)) },
      });
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i < 5; i++) {
      clock.advance(50);
      flush();
    }
    expect(sub.frames).toHaveLength(1);
    quiet.until = null;
    flush();
    expect(sub.deltas().map((d) => d.cluster?.coordination?.quiet)).toEqual([null]);
  });

  it('sends a fresh snapshot instead of a delta when more lock names changed than it keeps track of', () => {
    const { hub, join, hold, flush, scheduler } = setup();
    const sub = new Recorder();
    join(sub);
    for (let i = 0; i <= MAX_DIRTY; i++) hold(`burst-${i}`);
    expect((hub as unknown as { dirty: Set<string> }).dirty.size).toBeLessThanOrEqual(MAX_DIRTY);
    flush();
    scheduler.settle();
    const messages = sub.messages();
    expect(messages.filter((m) => m.event !== 'locks').map((m) => m.event)).toEqual(['snapshot', 'snapshot']);
    // The fresh snapshot's table comes in pages after its header.
    const pages = messages.slice(2).map((m) => m.data as LocksChunkMessage);
    const names = [...(messages[1]?.data as SnapshotMessage).locks, ...pages.flatMap((p) => p.locks)].map((l) => l.name);
    expect(new Set(names).size).toBe(MAX_DIRTY + 1);
    expect(pages.at(-1)?.last).toBe(true);
    hold('after');
    flush();
    expect(sub.deltas()).toEqual([expect.objectContaining({ upserts: [expect.objectContaining({ name: 'after' })], removed: [] })]);
  });

  it('sends a fresh snapshot when the engine was reset, and deltas again after it', () => {
    const { join, hold, flush, engine } = setup();
    hold('old');
    const sub = new Recorder();
    join(sub);
    engine.reset();
    hold('replaced');
    flush();
    const messages = sub.messages();
    expect(messages.map((m) => m.event)).toEqual(['snapshot', 'snapshot']);
    expect((messages[1]?.data as SnapshotMessage).locks.map((l) => l.name)).toEqual(['replaced']);
    // The feed shows no line for the reset itself.
    expect((messages[1]?.data as SnapshotMessage).feed.map((i) => i.kind)).toEqual(['grant', 'grant']);
    hold('after');
    flush();
    expect(sub.deltas()).toEqual([expect.objectContaining({ upserts: [expect.objectContaining({ name: 'after' })], removed: [] })]);
  });

  it('ends the streams and lets go of the engine and its timers when the first snapshot cannot be built', () => {
    const { hub, join, listeners, scheduler, hold, engine } = setup();
    hold('x');
    // A waiter: the lock takes the object form (lib/engine/compact-holders.ts), so the holder the
    // snapshot reads is this one object, not a view made per read.
    hold('x');
    const broken = engine.lock('x')?.holder;
    if (!broken) throw new Error('x not held');
    // A lock view that throws while the snapshot is built.
    Object.defineProperty(broken, 'token', {
      get: () => {
        throw new Error('boom');
      },
    });
    const sub = new Recorder();
    join(sub);
    expect(sub.closed).toBe(1);
    expect(sub.frames).toEqual([]);
    expect(listeners()).toBe(1);
    expect(scheduler.intervals.size).toBe(0);
    expect(hub.subscriberCount).toBe(0);
  });
});
