// The event hub's paged snapshots, with the dashboard's own reducer (lib/dashboard/dashboard-state.ts)
// as the reader: whatever the interleaving of engine changes, joins, reads, flushes and page
// sends, every reader ends with the engine's table; and what a stream costs stays bounded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Claim } from '../../lib/engine/claim.ts';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import {
  type ClusterView,
  type DeltaMessage,
  type LocksChunkMessage,
  noHandoversByCause,
  type SnapshotMessage,
  type StatsView,
} from '../../lib/ops-api/api-types.ts';
import { applyReceived, applySnapshot, type DashboardState } from '../../lib/dashboard/dashboard-state.ts';
import type { FeedJoin, FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { EventHub, type Scheduler, STALLED_READER_MS, type TimerHandle } from './event-hub.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';

const EPOCH = 1_700_000_000_000;
const FLUSH_MS = 100;

class StepScheduler implements Scheduler {
  private next = 1;
  readonly intervals = new Map<number, { fn: () => void; ms: number }>();
  readonly deferred: Array<() => void> = [];
  setInterval(fn: () => void, ms: number): TimerHandle {
    this.intervals.set(this.next, { fn, ms });
    return this.next++;
  }
  clearInterval(handle: TimerHandle): void {
    if (typeof handle === 'number') this.intervals.delete(handle);
  }
  defer(fn: () => void): void {
    this.deferred.push(fn);
  }
  /** One turn of deferred work (a setImmediate callback). */
  step(): boolean {
    const fn = this.deferred.shift();
    fn?.();
    return fn !== undefined;
  }
  fire(ms: number): void {
    for (const { fn, ms: period } of [...this.intervals.values()]) if (period === ms) fn();
  }
}

const decoder = new TextDecoder();

/** A stream and its reader: frames queue until the test reads them into the dashboard's state. */
class Reader implements FeedSubscriber {
  readonly queue: Uint8Array[] = [];
  readonly sent: Uint8Array[] = [];
  state: DashboardState | undefined;
  taken = 0;
  closed = false;
  join: FeedJoin | null = null;
  constructor(private readonly lowWater: number) {}
  send(frame: Uint8Array): boolean {
    if (this.closed) return false;
    this.queue.push(frame);
    this.sent.push(frame);
    // A ReadableStream calls pull after an enqueue that leaves it under its high-water mark.
    if (this.queuedBytes() < this.lowWater) this.pull();
    return true;
  }
  queuedBytes(): number {
    return this.queue.reduce((n, f) => n + f.byteLength, 0);
  }
  takenBytes(): number {
    return this.taken;
  }
  close(): void {
    this.closed = true;
  }
  private pull(): void {
    if (this.join?.ok === true) this.join.pull();
  }
  /** Takes up to `n` frames and applies them as the dashboard does. */
  read(n: number): void {
    for (let i = 0; i < n && this.queue.length > 0; i++) {
      const frame = this.queue.shift() as Uint8Array;
      this.taken += frame.byteLength;
      const m = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(decoder.decode(frame));
      if (m === null) continue; // a heartbeat
      const data = JSON.parse(m[2] as string) as unknown;
      if (m[1] === 'snapshot') this.state = applySnapshot(data as SnapshotMessage, 0);
      else if (m[1] === 'delta') this.state = applyReceived(this.state, [{ kind: 'delta', msg: data as DeltaMessage, receivedAt: 0 }]);
      else if (m[1] === 'locks') this.state = applyReceived(this.state, [{ kind: 'locks', msg: data as LocksChunkMessage, receivedAt: 0 }]);
    }
    if (this.queuedBytes() < this.lowWater) this.pull();
  }
}

function setup(
  o: {
    chunkLocks?: number;
    chunkBytes?: number;
    sendBytes?: number;
    lowWater?: number;
    maxBuffered?: number;
    headLocks?: number;
    headScanMaxLocks?: number;
  } = {},
) {
  const f = engineFixture({ blockSize: 1_000_000n });
  const clock = { now: () => f.clock.now(), wall: (t: number) => EPOCH + t };
  const history = new HistoryRecorder(f.engine, clock, () => EPOCH + f.clock.now());
  const stats = (): StatsView => ({
    asOf: EPOCH,
    state: 'serving',
    role: 'active',
    locks: f.engine.lockCount,
    held: f.engine.heldCount,
    waiters: f.engine.waiterCount,
    connections: { keyed: 0, session: 0 },
    tokenHighWater: f.engine.tokenHighWater.toString(),
    grants: 'ok',
    grantsTotal: 0,
    handover: { count: 0, p50: null, p95: null, p99: null },
    handoverByCause: noHandoversByCause(),
  });
  const cluster = () => ({ self: 'n1', nodes: [] }) as unknown as ClusterView;
  const scheduler = new StepScheduler();
  const lowWater = o.lowWater ?? 600;
  const hub = new EventHub({
    engine: f.engine,
    clock,
    instanceId: 'i',
    stats,
    cluster,
    history,
    audit: { subscribe: () => () => {} },
    scheduler,
    flushIntervalMs: FLUSH_MS,
    chunkLocks: o.chunkLocks ?? 2,
    chunkMs: Number.POSITIVE_INFINITY,
    // A few locks by name in the header, so that most tables here still page.
    headLocks: o.headLocks ?? 3,
    ...(o.headScanMaxLocks === undefined ? {} : { headScanMaxLocks: o.headScanMaxLocks }),
    lowWaterBytes: lowWater,
    ...(o.chunkBytes === undefined ? {} : { chunkBytes: o.chunkBytes }),
    ...(o.sendBytes === undefined ? {} : { sendBytes: o.sendBytes }),
    maxBufferedBytes: o.maxBuffered ?? Number.MAX_SAFE_INTEGER,
    streamsPerClient: 1_000,
  });
  const open = (client = '10.0.0.1') => {
    const reader = new Reader(lowWater);
    reader.join = hub.subscribe(reader, client);
    return reader;
  };
  const settle = () => {
    for (let i = 0; i < 100_000 && scheduler.step(); i++);
  };
  return { ...f, hub, scheduler, open, settle, flush: () => scheduler.fire(FLUSH_MS) };
}

/** What the table shows of each lock that the engine has (the clock stands still in these tests). */
function engineTable(engine: ReturnType<typeof engineFixture>['engine']) {
  return new Map([...engine.allLocks()].map((l) => [l.name, { token: l.holder?.token.toString() ?? null, queue: l.waiting }]));
}
function readerTable(state: DashboardState | undefined) {
  return new Map([...(state?.locks.values() ?? [])].map((r) => [r.summary.name, { token: r.summary.holder?.token ?? null, queue: r.summary.queueLength }]));
}

type Step =
  | { op: 'acquire'; name: number }
  | { op: 'acquire-initial'; name: number }
  | { op: 'release'; pick: number }
  | { op: 'open'; count: number }
  | { op: 'read'; reader: number; frames: number }
  | { op: 'turn' }
  | { op: 'flush' };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('acquire' as const), name: fc.integer({ min: 0, max: 40 }) }) },
  // A second claim on a lock the snapshot has paged: its queue length changes under the page.
  { weight: 3, arbitrary: fc.record({ op: fc.constant('acquire-initial' as const), name: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('open' as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('read' as const), reader: fc.nat(), frames: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 5, arbitrary: fc.constant({ op: 'turn' as const }) },
  { weight: 3, arbitrary: fc.constant({ op: 'flush' as const }) },
);

describe('EventHub paged snapshots', () => {
  it.each([
    ['pages of 2 locks', {}],
    // Pages that end at their JSON size, and pumps that hand out one page each: some streams wait a turn for a page others have.
    ['pages cut by size, one page handed out per turn', { chunkLocks: 1_000, chunkBytes: 300, sendBytes: 1 }],
  ])("leaves every reader with the engine's table, whatever the interleaving of changes, joins, reads, flushes and page sends (%s)", (_, budgets) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 3 }), fc.array(stepArb, { maxLength: 250 }), (initial, together, steps) => {
        const t = setup(budgets);
        const owner = new Owner();
        const claims: Claim[] = [];
        for (let i = 0; i < initial; i++) claims.push(t.fixed(`init/${i}`, owner));
        // Streams opened in the same turn share one snapshot (and its pages).
        const readers = Array.from({ length: together }, () => t.open());
        for (const step of steps) {
          if (step.op === 'acquire') claims.push(t.fixed(`k/${step.name}`, owner));
          else if (step.op === 'acquire-initial') claims.push(t.fixed(`init/${step.name}`, owner));
          else if (step.op === 'release') {
            const claim = claims.splice(step.pick % Math.max(1, claims.length), 1)[0];
            if (claim?.state === 'holding') t.engine.release(claim.lock.name, claim.token);
            else if (claim?.state === 'waiting') t.engine.kick(claim.lock.name, claim.id);
          } else if (step.op === 'open') for (let i = 0; i < step.count; i++) readers.push(t.open());
          else if (step.op === 'read') readers[step.reader % readers.length]?.read(step.frames);
          else if (step.op === 'turn') t.scheduler.step();
          else t.flush();
        }
        // Quiet from here on: everything queued is read, every page sent, the last changes flushed.
        for (let round = 0; round < 50; round++) {
          t.settle();
          for (const r of readers) r.read(Number.MAX_SAFE_INTEGER);
          t.flush();
        }
        for (const r of readers) {
          expect(r.closed).toBe(false);
          expect(r.state?.paging).toBeNull();
          expect(readerTable(r.state)).toEqual(engineTable(t.engine));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('sends a stream that does not read one page past its low-water mark, not the table', () => {
    const lowWater = 128 * 1024;
    const t = setup({ chunkLocks: 100, lowWater });
    const owner = new Owner();
    for (let i = 0; i < 5_000; i++) t.fixed(`lock/${i}`, owner);
    const idle = t.open();
    t.settle();
    const pages = idle.sent.slice(1);
    expect(pages.length).toBeGreaterThan(0);
    const biggest = Math.max(...pages.map((p) => p.byteLength));
    // Pages go out only while less than the low-water mark is queued: one page past it at most.
    expect(idle.queuedBytes()).toBeLessThan(lowWater + biggest);
    expect((pages.length + 1) * 100).toBeLessThan(2_000);
    idle.read(Number.MAX_SAFE_INTEGER);
    t.settle();
    expect(idle.sent.length - 1).toBeGreaterThan(pages.length);
  });

  it("starts with the table's first locks by name, complete up to the last of them while the rest pages in", () => {
    const t = setup({ chunkLocks: 50, headLocks: 20 });
    const owner = new Owner();
    const claims = new Map<string, Claim>();
    // Taken in reverse name order: the table's walk starts with the last names.
    for (let i = 299; i >= 0; i--) claims.set(`lock/${String(i).padStart(3, '0')}`, t.fixed(`lock/${String(i).padStart(3, '0')}`, owner));
    const reader = t.open();
    t.scheduler.step(); // the join window ends: the header goes out
    reader.read(Number.MAX_SAFE_INTEGER);
    const first = Array.from({ length: 20 }, (_, i) => `lock/${String(i).padStart(3, '0')}`);
    expect([...(reader.state?.locks.keys() ?? [])]).toEqual(first);
    expect(reader.state?.pagingThrough).toBe('lock/019');
    expect(reader.state?.paging).not.toBeNull();
    // Changes under the prefix before the rest arrives: one of the first goes, a new name sorts among them.
    const gone = claims.get('lock/005') as Claim;
    t.engine.release(gone.lock.name, gone.token);
    t.fixed('lock/004a', owner);
    t.flush();
    reader.read(1); // the delta (pages wait for the stream to pull them through the scheduler)
    const upTo = (names: Iterable<string>) => [...names].filter((n) => n <= 'lock/019').sort();
    expect(reader.state?.paging).not.toBeNull();
    expect(upTo(reader.state?.locks.keys() ?? [])).toEqual(upTo(engineTable(t.engine).keys()));
    for (let round = 0; round < 20; round++) {
      t.settle();
      reader.read(Number.MAX_SAFE_INTEGER);
    }
    expect(reader.state?.paging).toBeNull();
    expect(reader.state?.pagingThrough).toBeNull();
    expect(readerTable(reader.state)).toEqual(engineTable(t.engine));
    // The pages left out the header's locks: each lock came once.
    const paged = reader.sent
      .map((frame) => /^event: locks\ndata: (.*)\n\n$/s.exec(decoder.decode(frame)))
      .flatMap((m) => (m === null ? [] : (JSON.parse(m[1] as string) as LocksChunkMessage).locks.map((l) => l.name)));
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged.filter((n) => first.includes(n))).toEqual([]);
    // The 280 others, and the lock taken since the header (in a delta too).
    expect(paged.length).toBe(281);
  });

  it("gives a table over the scan limit the walk's first page, in no order, and says so", () => {
    const t = setup({ chunkLocks: 10, headLocks: 5, headScanMaxLocks: 30 });
    const owner = new Owner();
    for (let i = 39; i >= 0; i--) t.fixed(`lock/${String(i).padStart(2, '0')}`, owner);
    const reader = t.open();
    t.scheduler.step();
    reader.read(1);
    expect(reader.state?.pagingThrough).toBeNull();
    expect([...(reader.state?.locks.keys() ?? [])]).toEqual(Array.from({ length: 10 }, (_, i) => `lock/${String(39 - i).padStart(2, '0')}`));
    for (let round = 0; round < 10; round++) {
      t.settle();
      reader.read(Number.MAX_SAFE_INTEGER);
    }
    expect(readerTable(reader.state)).toEqual(engineTable(t.engine));
  });

  it('encodes each page once for the streams that joined together', () => {
    const t = setup({ chunkLocks: 10 });
    const owner = new Owner();
    for (let i = 0; i < 100; i++) t.fixed(`lock/${i}`, owner);
    const a = t.open();
    const b = t.open('10.0.0.2');
    for (let round = 0; round < 20; round++) {
      t.settle();
      a.read(Number.MAX_SAFE_INTEGER);
      b.read(Number.MAX_SAFE_INTEGER);
    }
    expect(a.sent.length).toBeGreaterThanOrEqual(10);
    expect(b.sent).toHaveLength(a.sent.length);
    expect(a.sent.every((frame, i) => frame === b.sent[i])).toBe(true);
    expect(readerTable(a.state).size).toBe(100);
  });

  it('cuts off a member that falls more than the slow-reader limit behind the one that reads, and lets the reader finish', () => {
    const t = setup({ chunkLocks: 10, maxBuffered: 200 * 1024 });
    const owner = new Owner();
    for (let i = 0; i < 2_000; i++) t.fixed(`lock/${i}`, owner);
    const fast = t.open();
    const stuck = t.open();
    for (let round = 0; round < 1_000 && fast.state?.paging !== null; round++) {
      t.settle();
      fast.read(Number.MAX_SAFE_INTEGER);
    }
    expect(stuck.closed).toBe(true);
    expect(fast.closed).toBe(false);
    expect(readerTable(fast.state).size).toBe(2_000);
    expect(t.hub.subscriberCount).toBe(1);
  });

  it('cuts off a stream whose reader took nothing for STALLED_READER_MS while output waited', () => {
    const t = setup();
    t.fixed('a', new Owner());
    const idle = t.open();
    const reading = t.open();
    t.settle();
    for (let ms = 0; ms <= STALLED_READER_MS + 1_000; ms += FLUSH_MS) {
      t.clock.advance(FLUSH_MS);
      reading.read(Number.MAX_SAFE_INTEGER);
      t.flush();
    }
    expect(idle.closed).toBe(true);
    expect(reading.closed).toBe(false);
  });
});
