// The in-sync keeper against a real three-member etcd (server/testing/etcd-cluster.ts), storing
// through EtcdRoleHolder.storeInSync: a synced standby that has acked everything answered is
// added (replies wait for it from the write on), one that lags past the bound is taken out (its
// replies wait until etcd has stored the removal, then flow), and a node that lost the role
// changes nothing.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FlushScheduler } from '../lines/flush-scheduler.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { FakeConnection, FakeStream } from '../testing/reply-gate-fakes.ts';
import { EtcdRoleHolder } from './etcd-role-holder.ts';
import { InSyncKeeper, type InSyncKeeperOptions, type StandbyState } from './in-sync-keeper.ts';
import { ReplyGate } from './reply-gate.ts';

const now = () => performance.now();

async function setup(prefix: string, bound: Pick<InSyncKeeperOptions, 'maxMembers' | 'priority' | 'now'> = {}) {
  const cluster = await EtcdCluster.start();
  const etcd = cluster.client();
  const holder = new EtcdRoleHolder({ client: cluster.client(), key: `${prefix}/active`, inSyncKey: `${prefix}/in-sync`, nodeId: 'a', ttlSeconds: 2, now });
  onTestFinished(() => holder.halt());
  holder.start();
  await vi.waitFor(() => expect(holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
  const conn = new FakeConnection('client');
  const latch = { promise: Promise.resolve(), open: () => {} };
  /** Writes wait from now until the returned function is called. */
  const holdWrites = () => {
    latch.promise = new Promise<void>((resolve) => {
      latch.open = resolve;
    });
    return () => latch.open();
  };
  const stream = new FakeStream();
  const scheduler = new FlushScheduler();
  const gate = new ReplyGate(stream);
  gate.attach(scheduler);
  gate.activate([]); // what the holder stored when it won
  const standbys = new Map<string, StandbyState>();
  /** Each write, with what the client had been written when it was sent and when etcd answered. */
  const writes: { members: string[]; sent: string[]; answered?: string[] }[] = [];
  const keeper = new InSyncKeeper({
    gate,
    store: async (m) => {
      const w: (typeof writes)[number] = { members: m, sent: [...conn.written] };
      writes.push(w);
      // The test may hold a write before it reaches etcd, to see what the gate does meanwhile.
      await latch.promise;
      return holder.storeInSync(m).then((ok) => {
        w.answered = [...conn.written];
        return ok;
      });
    },
    standbys: () => [...standbys.values()],
    lagBoundMs: 300,
    checkEveryMs: 20,
    ...bound,
  });
  onTestFinished(() => keeper.stop());
  const reply = (seq: number, text: string) => {
    stream.lastSeq = seq;
    scheduler.mark(conn);
    conn.send(text);
    scheduler.flushAll();
  };
  const stored = async () => JSON.parse((await etcd.get(`${prefix}/in-sync`).string()) ?? 'null') as string[] | null;
  return { holdWrites, cluster, holder, gate, keeper, standbys, writes, conn, reply, stored };
}

describe('the in-sync keeper', () => {
  it('adds a synced standby that acked everything answered, and takes out one that lags, write first', async () => {
    const t = await setup('baton/keeper-add');
    expect(await t.stored()).toEqual([]);
    t.keeper.start();
    // b is still receiving its snapshot: not added.
    t.standbys.set('b', { id: 'b', synced: false, lagMs: 0 });
    t.reply(4, 'one\n');
    expect(t.conn.written).toEqual(['one\n']); // empty set: answered at once
    await new Promise((r) => setTimeout(r, 200));
    expect(t.writes).toEqual([]);
    // Synced, but it has not acked position 4 (answered): not yet.
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 0 });
    t.gate.ack('b', 3);
    await new Promise((r) => setTimeout(r, 200));
    expect(t.writes).toEqual([]);
    const open = t.holdWrites();
    t.gate.ack('b', 4);
    await vi.waitFor(() => expect(t.writes.map((w) => w.members)).toEqual([['b']]), { timeout: 5_000, interval: 10 });
    // From the write on, replies wait for b (it may be electable before we hear it stored).
    t.reply(6, 'two\n');
    expect(t.conn.written).toEqual(['one\n']);
    open();
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect([...t.gate.members]).toEqual(['b']);
    expect(t.conn.written).toEqual(['one\n']);
    t.gate.ack('b', 6);
    expect(t.conn.written).toEqual(['one\n', 'two\n']);

    // b stops acking: past the bound it is taken out; its replies wait until etcd stored that.
    t.reply(9, 'three\n');
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 301 });
    await vi.waitFor(() => expect(t.writes).toHaveLength(2), { timeout: 5_000, interval: 5 });
    expect(t.writes[1]?.members).toEqual([]);
    await t.keeper.pending;
    expect(await t.stored()).toEqual([]);
    expect(t.writes[1]?.answered).toEqual(['one\n', 'two\n']); // still held when etcd answered
    expect(t.conn.written).toEqual(['one\n', 'two\n', 'three\n']);
    expect(t.gate.members.size).toBe(0);
  });

  it('a member whose stream is gone (cut off, or re-syncing) is taken out; one that lost the role changes nothing', async () => {
    const t = await setup('baton/keeper-gone');
    t.keeper.start();
    t.standbys.set('c', { id: 'c', synced: true, lagMs: 0 });
    t.gate.ack('c', 0);
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    t.reply(2, 'held\n');
    // Re-syncing (a new snapshot): its acks no longer count, it is taken out.
    t.standbys.set('c', { id: 'c', synced: false, lagMs: 0 });
    await vi.waitFor(async () => expect(await t.stored()).toEqual([]), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect(t.conn.written).toEqual(['held\n']);
    // The stream to c is gone altogether while it is a member again: out too.
    t.gate.ack('c', 2);
    t.standbys.set('c', { id: 'c', synced: true, lagMs: 0 });
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    t.standbys.delete('c');
    await vi.waitFor(async () => expect(await t.stored()).toEqual([]), { timeout: 5_000, interval: 10 });

    // The role is lost (resigned): the write is refused by etcd, the gate keeps the set it had.
    await t.keeper.pending;
    t.standbys.set('d', { id: 'd', synced: true, lagMs: 0 });
    t.gate.ack('d', 2);
    await t.holder.resign();
    const before = t.writes.length;
    await vi.waitFor(() => expect(t.writes.length).toBeGreaterThan(before), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect(await t.stored()).toEqual([]);
    expect(t.gate.members.size).toBe(0);
  });

  it('a handoff narrows the set through the keeper: the gate waits for the old set until etcd stored it, then for the successor alone; called off, the keeper widens it again', async () => {
    const t = await setup('baton/keeper-narrow');
    t.keeper.start();
    for (const id of ['b', 'c']) {
      t.standbys.set(id, { id, synced: true, lagMs: 0 });
      t.gate.ack(id, 0);
    }
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b', 'c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    // c stops acking (frozen): a reply b acked is held for c.
    t.reply(5, 'answered\n');
    t.gate.ack('b', 5);
    expect(t.conn.written).toEqual([]);
    const open = t.holdWrites();
    const narrowed = t.keeper.narrow('b', ['a']);
    await vi.waitFor(() => expect(t.writes.at(-1)?.members).toEqual(['a', 'b']), { timeout: 5_000, interval: 5 });
    // Sent, not stored: c may still be electable, so the reply still waits for it.
    await new Promise((r) => setTimeout(r, 100));
    expect(t.conn.written).toEqual([]);
    open();
    expect(await narrowed).toBe(true);
    expect(await t.stored()).toEqual(['a', 'b']);
    expect([...t.gate.members]).toEqual(['b']);
    // Stored: b acked it, so it goes out (and would before this node follows: nothing to drop).
    expect(t.writes.at(-1)?.answered).toEqual([]);
    expect(t.conn.written).toEqual(['answered\n']);
    expect(t.gate.connectionsHeld).toBe(0);
    // The keeper leaves the narrowed set alone meanwhile, though c is synced and could join.
    t.gate.ack('c', 5);
    const writes = t.writes.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(t.writes.length).toBe(writes);
    // Called off: the keeper widens it again to every synced standby that acked everything answered.
    t.keeper.resume();
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b', 'c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect([...t.gate.members].sort()).toEqual(['b', 'c']);
  });

  it('a handoff to a standby that has not acked everything answered is refused (the set is not narrowed)', async () => {
    const t = await setup('baton/keeper-narrow-refused');
    t.keeper.start();
    t.reply(3, 'one\n');
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 0 });
    t.gate.ack('b', 2);
    expect(await t.keeper.narrow('b', ['a'])).toBe(false);
    expect(t.writes).toEqual([]);
    expect(await t.stored()).toEqual([]);
  });
});

describe('the in-sync keeper with a bound on the set (--etcd-in-sync)', () => {
  const priority = ['a', 'b', 'c', 'd'];

  it('keeps at most that many members, the highest-priority synced standbys that acked everything answered', async () => {
    const t = await setup('baton/keeper-bound', { maxMembers: 1, priority });
    t.keeper.start();
    for (const id of ['d', 'c', 'b']) {
      t.standbys.set(id, { id, synced: true, lagMs: 0 });
      t.gate.ack(id, 0);
    }
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    await new Promise((r) => setTimeout(r, 150));
    expect(t.writes.map((w) => w.members)).toEqual([['b']]);
    // Replies wait for b alone: c and d acking changes nothing.
    t.reply(3, 'one\n');
    t.gate.ack('c', 3);
    t.gate.ack('d', 3);
    expect(t.conn.written).toEqual([]);
    t.gate.ack('b', 3);
    expect(t.conn.written).toEqual(['one\n']);
  });

  it('a higher-priority standby that syncs later takes the place of a lower one; replies wait for both until etcd stored it', async () => {
    const t = await setup('baton/keeper-bound-swap', { maxMembers: 1, priority });
    t.keeper.start();
    t.standbys.set('c', { id: 'c', synced: true, lagMs: 0 });
    t.gate.ack('c', 0);
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    t.reply(2, 'one\n');
    t.gate.ack('c', 2);
    expect(t.conn.written).toEqual(['one\n']);
    // b is synced but has not acked what was answered: c stays.
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 0 });
    t.gate.ack('b', 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(t.writes.map((w) => w.members)).toEqual([['c']]);
    const open = t.holdWrites();
    t.gate.ack('b', 2);
    await vi.waitFor(() => expect(t.writes.map((w) => w.members)).toEqual([['c'], ['b']]), { timeout: 5_000, interval: 5 });
    // Sent, not stored: c is still electable and b may already be.
    t.reply(4, 'two\n');
    t.gate.ack('b', 4);
    expect(t.conn.written).toEqual(['one\n']);
    open();
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect(t.writes[1]?.answered).toEqual(['one\n']);
    expect(t.conn.written).toEqual(['one\n', 'two\n']);
  });

  it('a member taken out is replaced by another synced standby in the same write; replies wait for both until it is stored', async () => {
    const t = await setup('baton/keeper-bound-replace', { maxMembers: 1, priority });
    t.keeper.start();
    for (const id of ['b', 'c']) {
      t.standbys.set(id, { id, synced: true, lagMs: 0 });
      t.gate.ack(id, 0);
    }
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    // b stops acking; c has everything. Past the bound, b goes and c comes, in one write.
    t.reply(5, 'held\n');
    t.gate.ack('c', 5);
    expect(t.conn.written).toEqual([]);
    const open = t.holdWrites();
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 301 });
    await vi.waitFor(() => expect(t.writes).toHaveLength(2), { timeout: 5_000, interval: 5 });
    expect(t.writes[1]?.members).toEqual(['c']);
    // Sent, not stored: b may still win, so the reply c acked still waits.
    await new Promise((r) => setTimeout(r, 100));
    expect(t.conn.written).toEqual([]);
    open();
    await t.keeper.pending;
    expect(await t.stored()).toEqual(['c']);
    expect(t.writes[1]?.answered).toEqual([]);
    expect(t.conn.written).toEqual(['held\n']);
    expect([...t.gate.members]).toEqual(['c']);
    // The stream to c goes too, with b still lagging: nobody can join, the set is empty (nobody
    // else electable) and replies flow.
    t.standbys.delete('c');
    await vi.waitFor(async () => expect(await t.stored()).toEqual([]), { timeout: 5_000, interval: 10 });
  });

  it('a member that stalls (a quarter of the lag bound) is replaced at once by a standby that has not, and takes its place back only after the hold-down', async () => {
    // The hold-down runs on this clock; the keeper's checks and etcd on real time.
    let clock = 0;
    const t = await setup('baton/keeper-stall', { maxMembers: 1, priority, now: () => clock });
    t.keeper.start();
    for (const id of ['b', 'c']) {
      t.standbys.set(id, { id, synced: true, lagMs: 0 });
      t.gate.ack(id, 0);
    }
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    // Both stall (say, the active itself was held up): nobody is better, b stays.
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 100 });
    t.standbys.set('c', { id: 'c', synced: true, lagMs: 100 });
    await new Promise((r) => setTimeout(r, 150));
    expect(t.writes.map((w) => w.members)).toEqual([['b']]);
    // Past the hold-down, c is fine again; then b stalls, well under the 300 ms bound: c takes its place.
    clock += 30 * 300;
    t.standbys.set('c', { id: 'c', synced: true, lagMs: 0 });
    t.reply(3, 'held\n');
    t.gate.ack('c', 3);
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 100 });
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['c']), { timeout: 5_000, interval: 10 });
    await t.keeper.pending;
    expect(t.conn.written).toEqual(['held\n']);
    // b is back to normal, and first by priority, but stalled a moment ago: c stays.
    t.standbys.set('b', { id: 'b', synced: true, lagMs: 0 });
    t.gate.ack('b', 3);
    clock += 30 * 300 - 1;
    await new Promise((r) => setTimeout(r, 150));
    expect(t.writes.map((w) => w.members)).toEqual([['b'], ['c']]);
    // The hold-down is over: b takes its place back by priority.
    clock += 1;
    await vi.waitFor(async () => expect(await t.stored()).toEqual(['b']), { timeout: 5_000, interval: 10 });
    expect(t.writes.map((w) => w.members)).toEqual([['b'], ['c'], ['b']]);
  });

  it('refuses a bound below 1', () => {
    const gate = new ReplyGate(new FakeStream());
    expect(() => new InSyncKeeper({ gate, store: async () => true, standbys: () => [], lagBoundMs: 1, maxMembers: 0 })).toThrow(/at least 1/);
  });
});
