// A snapshot streamed in slices: a table far bigger than one part goes as lines that each stay
// under the peer line cap, a slice per turn within its budget, and the standby's sink applies
// each part as it comes into the same table. The sink takes parts only of the snapshot it
// asked for, from the peer it asked; a slow standby makes the walk wait instead of queueing.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MAX_TOKEN, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { decodePeerMessage, type ReceivedPeerMessage, type SnapshotMessage, type SnapshotPartMessage } from '../../lib/cluster/peer-messages.ts';
import { MAX_PEER_LINE } from './peer-link.ts';
import { MAX_UNSENT_SNAPSHOT_BYTES, ReplicationSource } from './replication-source.ts';
import { ReplicationSink } from './replication-sink.ts';
import { DEFAULT_WALK_BUDGET, SNAPSHOT_PART_CHARS } from './snapshot-walk.ts';
import { deliver, HeldSlices, recordingLink } from '../testing/replication-wire.ts';

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function table(e: LockEngine): string[] {
  const out: string[] = [];
  for (const lock of e.allLocks()) {
    const q: number[] = [];
    for (let w = lock.head; w !== null; w = w.next) q.push(w.id);
    out.push(`${lock.name} ${lock.holder === null ? '-' : `${lock.holder.id}/${lock.holder.token}`} ${q.join(',')}`);
  }
  return out.sort();
}

/** An active with `locks` held locks (a waiter on every tenth), and a source whose slices the test runs. */
function active(locks: number, buffered: () => number = () => 0) {
  const clock = new FakeClock();
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  for (let i = 0; i < locks; i++) {
    const name = `jobs/${'n'.repeat(60)}/${i}`;
    engine.acquire({ name, owner, protocol: 'keyed', client: `10.1.2.3:${i % 60000}`, leaseMs: 60_000, waitMs: 0, sliding: false });
    if (i % 10 === 0) engine.acquire({ name, owner, protocol: 'keyed', client: '10.9.9.9:1', leaseMs: 60_000, waitMs: 30_000, sliding: false });
  }
  const slices = new HeldSlices();
  const source = new ReplicationSource({
    engine,
    clock,
    instanceId: 'i-a',
    ackTimeoutMs: 1000,
    ceiling: () => 200_000n,
    failovers: () => [],
    onStreamDropped: () => {},
    schedule: slices.schedule,
  });
  source.start();
  const wire = recordingLink(buffered);
  return { clock, engine, slices, source, ...wire };
}

const mirror = () => new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore()));

function decode(line: string): ReceivedPeerMessage {
  const d = decodePeerMessage(line);
  if (!d.ok) throw new Error(d.error);
  return d.message;
}

describe('a streamed snapshot', () => {
  it('a table of several MiB goes a slice per turn, in lines under the budget and a lock, and the sink rebuilds the same table', () => {
    const { engine, slices, source, link, lines } = active(40_000);
    source.addStandby('b', link);
    expect(
      lines.map((l) => decode(l).t),
      'only the start goes in the turn the request came',
    ).toEqual(['snapshot-begin']);
    let turns = 0;
    while (slices.runOne()) turns++;
    const total = lines.reduce((n, l) => n + l.length, 0);
    expect(total, 'the table is bigger than the line cap').toBeGreaterThan(MAX_PEER_LINE);
    const messages = lines.map(decode);
    const parts = messages.filter((m) => m.t === 'snapshot-part');
    expect(turns, 'one part per turn').toBe(parts.length);
    for (const l of lines) expect(l.length).toBeLessThan(DEFAULT_WALK_BUDGET.chars + 1024);
    const end = messages.at(-1) as SnapshotMessage;
    expect(end.t).toBe('snapshot');
    expect(end.parts).toBe(parts.length);
    expect(source.streaming('b'), 'in sync once the end went').toBe(true);

    const b = mirror();
    const resets: number[] = [];
    b.subscribe((e) => {
      if (e.type === 'reset') resets.push(b.lockCount);
    });
    const sink = new ReplicationSink(b);
    sink.expectSnapshot('a');
    const got = deliver(sink, 'a', lines, MAX_TOKEN);
    expect(got).toEqual({ begun: 1, parts: parts.length, finished: 1 });
    expect(table(b)).toEqual(table(engine));
    expect(resets, 'listeners re-read at the start and once the table is whole').toEqual([0, 40_000]);
  });

  it('a standby is no handoff target until the last part has gone', () => {
    const { slices, source, link } = active(5_000);
    source.addStandby('b', link);
    expect(source.streaming('b')).toBe(false);
    slices.runOne();
    expect(source.streaming('b')).toBe(false);
    slices.runAll();
    expect(source.streaming('b')).toBe(true);
  });

  it('a queue longer than a line goes on in the next line, in the same turn, and arrives whole and in order', () => {
    const { engine, slices, source, link, lines } = active(0);
    for (let i = 0; i < 30_000; i++)
      engine.acquire({ name: 'one/long/queue', owner, protocol: 'keyed', client: `10.0.0.1:${i}`, leaseMs: 60_000, waitMs: 60_000, sliding: false });
    source.addStandby('b', link);
    slices.runOne();
    const parts = lines.map(decode).filter((m): m is SnapshotPartMessage => m.t === 'snapshot-part');
    expect(parts.length).toBeGreaterThan(1);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(SNAPSHOT_PART_CHARS + 1024);
    expect(parts.slice(1).map((p) => p.cont)).toEqual(parts.slice(1).map(() => 'one/long/queue'));
    slices.runAll();
    const b = mirror();
    const sink = new ReplicationSink(b);
    sink.expectSnapshot('a');
    expect(deliver(sink, 'a', lines, MAX_TOKEN).finished).toBe(1);
    expect(table(b)).toEqual(table(engine));
    expect(b.waiterCount).toBe(29_999);
  });

  it('parts nobody asked for, from another peer, or before the start are not applied; a snapshot missing a part is not in sync', () => {
    const { slices, source, link, lines } = active(20_000);
    source.addStandby('b', link);
    slices.runAll();
    const messages = lines.map(decode);
    const begin = messages[0];
    const parts = messages.filter((m): m is SnapshotPartMessage => m.t === 'snapshot-part');
    const end = messages.at(-1) as SnapshotMessage;
    if (begin?.t !== 'snapshot-begin') throw new Error('no begin');
    expect(begin.locks, 'the start names the table size, for the standby to make room').toBe(20_000);
    expect(parts.length).toBeGreaterThan(1);
    const b = mirror();
    const sink = new ReplicationSink(b);
    expect(sink.beginSnapshot('a', begin), 'before any request').toBe(false);
    expect(sink.applyPart('a', parts[0] as SnapshotPartMessage), 'before any request').toBe(false);
    sink.expectSnapshot('a');
    expect(sink.applyPart('a', parts[0] as SnapshotPartMessage), 'asked, but not begun').toBe(false);
    expect(sink.beginSnapshot('c', begin), 'from a peer not asked').toBe(false);
    expect(sink.beginSnapshot('a', begin)).toBe(true);
    expect(sink.applyPart('c', parts[0] as SnapshotPartMessage), 'from a peer not asked').toBe(false);
    for (const p of parts.slice(1)) expect(sink.applyPart('a', p)).toBe(true);
    expect(sink.finishSnapshot('a', end), 'one part missing').toBe(false);
    expect(sink.receiving('a'), 'the next request starts over').toBe(false);
  });

  it('a standby that stopped reading makes the walk wait for the link to drain, not queue the table', () => {
    let buffered = 0;
    const { slices, source, link, lines, drain } = active(20_000, () => buffered);
    source.addStandby('b', link);
    slices.runOne();
    const after = lines.length;
    buffered = MAX_UNSENT_SNAPSHOT_BYTES + 1;
    slices.runOne();
    expect(slices.pending, 'nothing scheduled while the link is full').toBe(0);
    expect(lines.length, 'no part read meanwhile').toBe(after);
    buffered = 0;
    drain();
    slices.runAll();
    expect(decode(lines.at(-1) as string).t).toBe('snapshot');
  });

  it('a second request starts a new snapshot: the first walk sends nothing more', () => {
    const { slices, source, link, lines } = active(20_000);
    source.addStandby('b', link);
    slices.runOne();
    source.addStandby('b', link);
    lines.splice(0);
    slices.runAll();
    const kinds = lines.map((l) => decode(l).t);
    expect(kinds.filter((t) => t === 'snapshot')).toHaveLength(1);
    const end = decode(lines.at(-1) as string) as SnapshotMessage;
    expect(end.parts, 'the end counts the new walk alone').toBe(kinds.filter((t) => t === 'snapshot-part').length);
  });

  it('a part is checked entry by entry: a malformed holder or waiter, or a bad cont, is refused with the reason', () => {
    const h = ['l', 1, '7', 'keyed', 'c', 1000, false, 500, 10];
    const w = ['l', 2, 'session', 'c', 1000, true, 5, null];
    const part = (holders: unknown[], waiters: unknown[], extra = '') => JSON.stringify({ t: 'snapshot-part', holders, waiters }).replace('{', `{${extra}`);
    expect(decodePeerMessage(part([h], [w]))).toEqual({ ok: true, message: { t: 'snapshot-part', holders: [h], waiters: [w] } });
    expect(decodePeerMessage(part([h], [w], '"cont":"l",')).ok).toBe(true);
    expect(decodePeerMessage(part([['l', 1, '18446744073709551616', 'keyed', 'c', 1000, false, 500, 10]], []))).toEqual({
      ok: false,
      error: 'malformed snapshot holder',
    });
    expect(decodePeerMessage(part([['l', 1, '7', 'udp', 'c', 1000, false, 500, 10]], []))).toEqual({ ok: false, error: 'malformed snapshot holder' });
    expect(decodePeerMessage(part([[...h, 'extra']], []))).toEqual({ ok: false, error: 'malformed snapshot holder' });
    expect(decodePeerMessage(part([], [['l', 2, 'session', 'c', 1000, true, 5]]))).toEqual({ ok: false, error: 'malformed snapshot waiter' });
    expect(decodePeerMessage(part([], [], '"cont":3,'))).toEqual({ ok: false, error: 'malformed snapshot part' });
    expect(decodePeerMessage(JSON.stringify({ t: 'snapshot-part', holders: {}, waiters: [] })).ok).toBe(false);
  });
});
