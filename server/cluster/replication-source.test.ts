// The active side's bookkeeping with a recording link and a fake clock: lag in events and ms
// from the acks, the ceiling wait (all standbys, or cut off at the timeout), and the cut-off of a
// standby that stopped reading.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { JOINING_ACK_TIMEOUTS, ReplicationSource, type StandbyLink } from './replication-source.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function recorder(buffered = 0) {
  const lines: string[] = [];
  const link: StandbyLink & { closed: string | null } = {
    closed: null,
    send: (m) => lines.push(JSON.stringify(m)),
    sendRaw: (l) => lines.push(l),
    close(reason) {
      this.closed = reason;
    },
    bufferedBytes: () => buffered,
    whenDrained: () => {},
    flushNow: () => {},
  };
  return { link, lines };
}

function setup(ackTimeoutMs = 1000) {
  const clock = new FakeClock();
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  const dropped: string[] = [];
  const source = new ReplicationSource({
    engine,
    clock,
    instanceId: 'i',
    ackTimeoutMs,
    ceiling: () => 0n,
    failovers: () => [],
    onStreamDropped: (id) => dropped.push(id),
  });
  source.start();
  return { clock, engine, source, dropped };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ReplicationSource', () => {
  it('writes the events of a turn to the standby before any client reply of that turn is written', () => {
    const { engine, source } = setup();
    const queued: string[] = [];
    const written: string[] = [];
    const link: StandbyLink = {
      send: (m) => queued.push(JSON.stringify(m)),
      sendRaw: (l) => queued.push(l),
      close: () => {},
      bufferedBytes: () => 0,
      whenDrained: () => {},
      flushNow: () => written.push(...queued.splice(0)),
    };
    source.addStandby('b', link);
    written.length = 0;
    const flusher = new FlushScheduler();
    flusher.setLead(() => source.flush());
    // A client connection whose reply (the grant, then the release) goes out in the pass.
    const seenByClientWrite: string[][] = [];
    const client = {
      flush: () => void seenByClientWrite.push([...written]),
      cut: () => '',
      writeCut: () => {},
      abandon: () => {},
      endTransport: () => {},
      closed: false,
    };
    const c = engine.acquire({ name: 'x', owner, protocol: 'keyed', client: 'c', leaseMs: 1000, waitMs: 0, sliding: false });
    flusher.mark(client);
    flusher.flushAll();
    engine.release('x', c.token);
    flusher.mark(client);
    flusher.flushAll();
    expect(seenByClientWrite).toHaveLength(2);
    expect(seenByClientWrite[0]?.join('')).toContain('["g","x"');
    expect(seenByClientWrite[1]?.join('')).toContain('["r","x"');
  });

  it('reports lag in events and in ms since the oldest unacked batch', () => {
    const { clock, engine, source } = setup();
    const { link } = recorder();
    source.addStandby('b', link);
    const c = engine.acquire({ name: 'x', owner, protocol: 'keyed', client: 'c', leaseMs: 1000, waitMs: 0, sliding: false });
    source.flush();
    clock.advance(30);
    engine.release('x', c.token);
    source.flush();
    clock.advance(20);
    expect(source.lags()).toEqual({ b: { events: 2, ms: 50 } });
    source.onAck('b', 1);
    expect(source.lags()).toEqual({ b: { events: 1, ms: 20 } });
    source.onAck('b', 2);
    expect(source.lags()).toEqual({ b: { events: 0, ms: 0 } });
  });

  it('a ceiling is acknowledged once every streaming standby stored it', async () => {
    const { source } = setup();
    source.addStandby('b', recorder().link);
    source.addStandby('c', recorder().link);
    let done = false;
    const wait = source.awaitCeiling(200n).then(() => {
      done = true;
    });
    source.onCeilingAck('b', 200n);
    await Promise.resolve();
    expect(done).toBe(false);
    source.onCeilingAck('c', 200n);
    await wait;
    expect(done).toBe(true);
  });

  it('a standby that does not acknowledge in time is cut off rather than holding up the tokens', async () => {
    vi.useFakeTimers();
    const { source, dropped } = setup(500);
    const slow = recorder();
    source.addStandby('b', slow.link);
    const wait = source.awaitCeiling(200n);
    vi.advanceTimersByTime(500);
    await wait;
    expect(dropped).toEqual(['b']);
    expect(slow.link.closed).toMatch(/token ceiling/);
    expect(source.streaming('b')).toBe(false);
  });

  it('a standby still receiving its snapshot gets JOINING_ACK_TIMEOUTS ack timeouts before it is cut off', async () => {
    vi.useFakeTimers();
    const { engine, source, dropped } = setup(500);
    // A table the walk cannot send while the link is full: the snapshot stays under way.
    for (let i = 0; i < 100; i++) engine.acquire({ name: `l${i}`, owner, protocol: 'keyed', client: 'c', leaseMs: 60_000, waitMs: 0, sliding: false });
    const joining = recorder(64 * 1024 * 1024 - 1);
    const inSync = recorder();
    source.addStandby('b', joining.link);
    source.addStandby('c', inSync.link);
    vi.advanceTimersByTime(0);
    // streaming(): the snapshot has ended. c has its table; b's walk waits for its link to drain.
    expect([source.streaming('b'), source.streaming('c')]).toEqual([false, true]);
    let done = false;
    const wait = source.awaitCeiling(200n).then(() => {
      done = true;
    });
    source.onCeilingAck('c', 200n);
    vi.advanceTimersByTime(500);
    await Promise.resolve();
    expect(dropped, 'not cut off at the first ack timeout while joining').toEqual([]);
    expect(done).toBe(false);
    vi.advanceTimersByTime((JOINING_ACK_TIMEOUTS - 1) * 500 - 1);
    await Promise.resolve();
    expect(dropped).toEqual([]);
    vi.advanceTimersByTime(1);
    await wait;
    expect(dropped, 'cut off after JOINING_ACK_TIMEOUTS of them').toEqual(['b']);
    expect(joining.link.closed).toMatch(/token ceiling/);
  });

  it('a joining standby that acknowledges late is kept, and the wait ends then', async () => {
    vi.useFakeTimers();
    const { engine, source, dropped } = setup(500);
    for (let i = 0; i < 100; i++) engine.acquire({ name: `l${i}`, owner, protocol: 'keyed', client: 'c', leaseMs: 60_000, waitMs: 0, sliding: false });
    source.addStandby('b', recorder(64 * 1024 * 1024 - 1).link);
    vi.advanceTimersByTime(0);
    const wait = source.awaitCeiling(200n);
    vi.advanceTimersByTime(3 * 500);
    source.onCeilingAck('b', 200n);
    await wait;
    expect(dropped, 'kept: it acknowledged within its longer time').toEqual([]);
  });

  it('a standby that stopped reading is cut off instead of buffered without bound', () => {
    const { engine, source, dropped } = setup();
    const stuck = recorder(65 * 1024 * 1024);
    const fine = recorder(0);
    source.addStandby('b', stuck.link);
    source.addStandby('c', fine.link);
    engine.acquire({ name: 'x', owner, protocol: 'keyed', client: 'c', leaseMs: 1000, waitMs: 0, sliding: false });
    source.flush();
    expect(dropped).toEqual(['b']);
    expect(stuck.link.closed).toMatch(/MiB of replication unread/);
    expect(fine.lines.some((l) => l.includes('"t":"ev"'))).toBe(true);
  });
});

describe('acks for the reply gate (etcd mode)', () => {
  it('tells the listener of acks once the snapshot has all gone, the snapshot end at the start position included, and replays the last one to a new listener', async () => {
    const { source } = setup();
    const { link } = recorder();
    const heard: [string, number][] = [];
    source.onSyncedAck((id, seq) => heard.push([id, seq]));
    source.addStandby('b', link);
    source.onAck('b', 0); // during the walk: a partial table, not counted
    expect(heard).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.streaming('b')).toBe(true);
    source.onAck('b', 0); // the snapshot's end, at the position the stream began at
    expect(heard).toEqual([['b', 0]]);
    source.onAck('b', 0);
    expect(heard).toEqual([['b', 0]]);
    const later: [string, number][] = [];
    source.onSyncedAck((id, seq) => later.push([id, seq]));
    expect(later).toEqual([['b', 0]]);
  });
});
