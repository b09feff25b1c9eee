// The bounds of one snapshot page (snapshot-pass.ts): a page stops at its lock count, its JSON
// size or its loop time, whichever comes first, and its frame is the message encodeFrame would
// make. The slice clock is a counter the test controls, so nothing here is timed.
import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import type { LocksChunkMessage } from '../../lib/ops-api/api-types.ts';
import { lockSummary } from '../lock-views/lock-views.ts';
import { CHECK_EVERY, encodeFrame, encodeFrameWithLocks, type PassOptions, SnapshotPass } from './snapshot-pass.ts';
import { TakingSink } from './testing/taking-sink.ts';

const decoder = new TextDecoder();

function parse(frame: Uint8Array): { event: string; data: unknown } {
  const m = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(decoder.decode(frame));
  if (m === null) throw new Error('not an event frame');
  return { event: m[1] as string, data: JSON.parse(m[2] as string) as unknown };
}

/** A pass over a table of `locks` locks, the i-th taken under `name(i)`, with one member that reads everything. */
function setup(locks: number, opts: Partial<PassOptions>, name = (i: number) => `lock/${String(i).padStart(4, '0')}`) {
  const f = engineFixture({ blockSize: 1_000_000n });
  const owner = new Owner();
  for (let i = 0; i < locks; i++) f.fixed(name(i), owner);
  const clock = { now: () => f.clock.now(), wall: (t: number) => t };
  const pass = new SnapshotPass(f.engine, clock, {
    chunkLocks: 1_000,
    chunkBytes: Number.MAX_SAFE_INTEGER,
    chunkMs: Number.POSITIVE_INFINITY,
    sendBytes: Number.MAX_SAFE_INTEGER,
    maxBehind: Number.MAX_SAFE_INTEGER,
    lowWater: 1,
    now: () => 0,
    ...opts,
  });
  const sink = new TakingSink();
  pass.members.add({ sub: sink, position: 1 });
  /** Every page after the header's: pumps until the member has the whole table. */
  const pages = (): LocksChunkMessage[] => {
    let done = false;
    for (let i = 0; i < 10_000 && !done; i++)
      pass.pump(
        () => {
          throw new Error('cut off');
        },
        () => (done = true),
      );
    expect(done).toBe(true);
    return sink.frames.map((frame) => parse(frame).data as LocksChunkMessage);
  };
  return { ...f, clock, pass, pages };
}

describe('SnapshotPass pages', () => {
  it('ends a page after the lock whose JSON reaches chunkBytes', () => {
    const budget = 600; // about three summaries of a held lock/NNNN
    const t = setup(100, { chunkBytes: budget });
    const pages = [t.pass.first().json, ...t.pages().map((p) => p.locks.map((l) => JSON.stringify(l)))];
    const size = (json: string[]) => json.reduce((n, s) => n + s.length + 1, 0);
    expect(pages.length).toBeGreaterThan(20);
    for (const json of pages.slice(0, -1)) {
      // It reached the budget with its last lock, and was under it before that lock.
      expect(size(json)).toBeGreaterThanOrEqual(budget);
      expect(size(json.slice(0, -1))).toBeLessThan(budget);
    }
    expect(pages.flat().length).toBe(100);
  });

  it('looks at the slice clock every CHECK_EVERY locks and ends the page once chunkMs is spent', () => {
    let calls = 0;
    // Each look at the clock moves it one ms on: started at 0, 1 ms after CHECK_EVERY locks, 2 after twice that.
    const t = setup(10 * CHECK_EVERY, { chunkMs: 2, now: () => calls++ });
    expect(t.pass.first().json.length).toBe(2 * CHECK_EVERY);
    calls = 0;
    const pages = t.pages();
    expect(pages[0]?.locks.length).toBe(2 * CHECK_EVERY);
  });

  it('ends a page at chunkLocks, and every lock of the table is in exactly one page', () => {
    const t = setup(250, { chunkLocks: 60 });
    const names = t.pass.first().json.map((s) => (JSON.parse(s) as { name: string }).name);
    const pages = t.pages();
    for (const p of pages) expect(p.locks.length).toBeLessThanOrEqual(60);
    for (const p of pages) names.push(...p.locks.map((l) => l.name));
    expect(names).toEqual([...t.engine.allLocks()].map((l) => l.name));
    expect(pages.at(-1)?.last).toBe(true);
    expect(pages.slice(0, -1).every((p) => !p.last)).toBe(true);
  });

  it('hands out at most sendBytes per pump (one chunk at least), starting with a different member each time', () => {
    const t = setup(50, { chunkLocks: 10, sendBytes: 1 });
    t.pass.first();
    const sinks = [new TakingSink(), new TakingSink()];
    for (const sub of sinks) t.pass.members.add({ sub, position: 1 });
    const members = [...t.pass.members];
    const all = () => members.map((m) => m.sub as TakingSink);
    const sent = () => all().reduce((n, s) => n + s.frames.length, 0);
    const firstTaker: number[] = [];
    let complete = 0;
    for (let pump = 0; pump < 100 && complete < 3; pump++) {
      const before = all().map((s) => s.frames.length);
      const total = sent();
      t.pass.pump(
        () => {
          throw new Error('cut off');
        },
        (m) => {
          t.pass.members.delete(m); // as the hub does
          complete++;
        },
      );
      const after = sent();
      if (complete === 0) expect(after - total).toBe(1);
      firstTaker.push(all().findIndex((s, i) => s.frames.length > (before[i] as number)));
    }
    expect(complete).toBe(3);
    // Four chunks after the header's, then an empty one that ends the table, each to every member.
    for (const s of all()) expect(s.frames.map((f) => (parse(f).data as LocksChunkMessage).locks.length)).toEqual([10, 10, 10, 10, 0]);
    expect(firstTaker.slice(0, 6)).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('with headByName, gives the first locks by name, and pages every other lock of the table once', () => {
    // Taken in an order far from name order.
    const t = setup(500, { chunkLocks: 64, headByName: 40 }, (i) => `lock/${String((i * 7919) % 500).padStart(4, '0')}`);
    expect(t.pass.firstByName).toBe(true);
    const names = (json: string[]) => json.map((j) => (JSON.parse(j) as { name: string }).name);
    const head = names(t.pass.first().json);
    const sorted = [...t.engine.allLocks()].map((l) => l.name).sort();
    expect(head).toEqual(sorted.slice(0, 40));
    expect(t.pass.done).toBe(false);
    const paged = t.pages().flatMap((page) => page.locks.map((l) => l.name));
    expect([...head, ...paged].sort()).toEqual(sorted);
    // A table no bigger than the header is done with it.
    const small = setup(3, { headByName: 40 }, (i) => ['c', 'a', 'b'][i] as string);
    expect(names(small.pass.first().json)).toEqual(['a', 'b', 'c']);
    expect(small.pass.done).toBe(true);
  });

  it('makes the frame encodeFrame makes from the same locks, once parsed', () => {
    const t = setup(3, {});
    const locks = [...t.engine.allLocks()].map((l) => lockSummary(l, t.clock));
    const framed = encodeFrameWithLocks('locks', { json: locks.map((l) => JSON.stringify(l)) }, { last: true });
    expect(parse(framed)).toEqual(parse(encodeFrame('locks', { locks, last: true })));
    expect(parse(encodeFrameWithLocks('snapshot', { json: [] }, {}))).toEqual({ event: 'snapshot', data: { locks: [] } });
  });
});
