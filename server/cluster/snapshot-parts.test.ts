// A snapshot in parts: a table far bigger than one part goes as lines that each stay under the
// peer line cap, and the standby's sink puts them back together into the same table. The sink
// keeps parts only of the snapshot it asked for, from the peer it asked, and only so many.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { FakeClock } from '../../lib/engine/clock.ts';
import { LockEngine } from '../../lib/engine/lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../lib/tokens/token-source.ts';
import { decodePeerMessage, type PeerMessage, type SnapshotMessage, type SnapshotPartMessage } from '../../lib/cluster/peer-messages.ts';
import { MAX_PEER_LINE } from './peer-link.ts';
import { ReplicationSource, SNAPSHOT_PART_CHARS } from './replication-source.ts';
import { MAX_SNAPSHOT_PARTS, ReplicationSink } from './replication-sink.ts';

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

/** The lines a source sends a new standby for an engine with `locks` held locks (each with a waiter on every tenth). */
function snapshotLines(locks: number): { engine: LockEngine; lines: string[] } {
  const clock = new FakeClock();
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore()));
  for (let i = 0; i < locks; i++) {
    const name = `jobs/${'n'.repeat(60)}/${i}`;
    engine.acquire(name, owner, 'keyed', `10.1.2.3:${i % 60000}`, 60_000, 0, false);
    if (i % 10 === 0) engine.acquire(name, owner, 'keyed', '10.9.9.9:1', 60_000, 30_000, false);
  }
  const source = new ReplicationSource({ engine, clock, instanceId: 'i-a', ackTimeoutMs: 1000, ceiling: () => 200_000n, failovers: () => [], onStreamDropped: () => {} });
  source.start();
  const lines: string[] = [];
  source.addStandby('b', { send: (m: PeerMessage) => lines.push(JSON.stringify(m)), sendRaw: (l) => lines.push(l.trimEnd()), close: () => {}, bufferedBytes: () => 0 });
  return { engine, lines };
}

function decode(line: string): PeerMessage {
  const d = decodePeerMessage(line);
  if (!d.ok) throw new Error(d.error);
  return d.message;
}

describe('a snapshot in parts', () => {
  it('a table of several MiB goes in lines under a part and a bit, and the sink rebuilds the same table', () => {
    const { engine, lines } = snapshotLines(40_000);
    const total = lines.reduce((n, l) => n + l.length, 0);
    expect(total, 'the table is bigger than the line cap').toBeGreaterThan(MAX_PEER_LINE);
    for (const l of lines) expect(l.length).toBeLessThan(SNAPSHOT_PART_CHARS + 1024);
    const messages = lines.map(decode);
    const end = messages.at(-1) as SnapshotMessage;
    expect(end.t).toBe('snapshot');
    expect(end.parts).toBe(lines.length - 1);

    const mirror = new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore()));
    const sink = new ReplicationSink(mirror);
    sink.expectSnapshot('a');
    for (const m of messages.slice(0, -1)) expect(sink.addPart('a', m as SnapshotPartMessage)).toBe(true);
    const whole = sink.finishSnapshot('a', end);
    expect(whole).not.toBeNull();
    sink.applySnapshot(whole as SnapshotMessage);
    expect(table(mirror)).toEqual(table(engine));
  });

  it('parts nobody asked for, or from another peer, are not kept; a snapshot missing a part is not applied', () => {
    const { lines } = snapshotLines(20_000);
    const messages = lines.map(decode);
    const parts = messages.slice(0, -1) as SnapshotPartMessage[];
    const end = messages.at(-1) as SnapshotMessage;
    expect(parts.length).toBeGreaterThan(1);
    const sink = new ReplicationSink(new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore())));
    expect(sink.addPart('a', parts[0] as SnapshotPartMessage), 'before any request').toBe(false);
    sink.expectSnapshot('a');
    expect(sink.addPart('c', parts[0] as SnapshotPartMessage), 'from a peer not asked').toBe(false);
    for (const p of parts.slice(1)) sink.addPart('a', p);
    expect(sink.finishSnapshot('a', end), 'one part missing').toBeNull();
  });

  it('a peer sending parts without end is cut off at the bound', () => {
    const sink = new ReplicationSink(new LockEngine(new FakeClock(), new BlockTokenSource(new MemoryCeilingStore())));
    sink.expectSnapshot('a');
    const part: SnapshotPartMessage = { t: 'snapshot-part', holders: [], waiters: [] };
    for (let i = 0; i < MAX_SNAPSHOT_PARTS; i++) sink.addPart('a', part);
    expect(() => sink.addPart('a', part)).toThrow(/more than 1024 parts/);
    expect(sink.addPart('a', part), 'nothing kept after the cut').toBe(false);
  });
});
