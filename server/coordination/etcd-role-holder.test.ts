// The etcd role holder against a real three-member etcd on loopback (server/testing/etcd-cluster.ts).
// "Holds" means "may grant" (mayGrant): the windows are rebuilt from the holders' events on this
// process's monotonic clock (performance.now), which both holders share, so an overlap is measured,
// not inferred.
import type { Etcd3 } from 'etcd3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { HoldLog, overlaps } from '../testing/etcd-hold-log.ts';
import { EtcdRoleHolder } from './etcd-role-holder.ts';

const now = () => performance.now();

function holder(client: Etcd3 | Etcd3[], nodeId: string, ttlSeconds: number, inSyncKey?: string, quietKey?: string): { holder: EtcdRoleHolder; log: HoldLog } {
  const log = new HoldLog(nodeId);
  const h = new EtcdRoleHolder({
    client,
    key: 'baton/test/active',
    nodeId,
    ttlSeconds,
    now,
    onEvent: log.onEvent,
    ...(inSyncKey === undefined ? {} : { inSyncKey }),
    ...(quietKey === undefined ? {} : { quietKey }),
  });
  // Stopped when the test ends, pass or fail, without a word to etcd (the cluster goes next).
  onTestFinished(() => h.halt());
  return { holder: h, log };
}

function started(...hs: EtcdRoleHolder[]): void {
  for (const h of hs) h.start();
}

describe('the etcd role holder', () => {
  it('two holders racing: one holds, never both; on resign the other takes over without waiting out the TTL', async () => {
    const cluster = await EtcdCluster.start();
    const a = holder(cluster.client(), 'a', 2);
    const b = holder(cluster.client(), 'b', 2);
    started(a.holder, b.holder);
    await vi.waitFor(() => expect(a.holder.mayGrant() || b.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    const [winner, loser] = a.holder.holding ? [a, b] : [b, a];
    expect(loser.holder.holding).toBe(false);
    // The loser's first campaign may still be on its way (its lease grant came later).
    await vi.waitFor(() => expect(loser.holder.seenHolder).toBe(winner.log.node), { timeout: 2_000, interval: 10 });
    // Several keep-alive rounds (a third of a TTL apart): the winner's window is one, unbroken.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(winner.log.windows).toHaveLength(1);
    expect(loser.log.windows).toHaveLength(0);

    const resignedAt = now();
    await winner.holder.resign();
    expect(winner.holder.mayGrant()).toBe(false);
    await vi.waitFor(() => expect(loser.holder.mayGrant()).toBe(true), { timeout: 5_000, interval: 10 });
    // The revoke deleted the key: the other won on its next campaign, well before a TTL.
    expect((loser.log.windows[0]?.start ?? Number.POSITIVE_INFINITY) - resignedAt).toBeLessThan(2_000);
    expect(overlaps([a.log, b.log])).toEqual([]);
  });

  it('a holder cut off from etcd stops granting before the other can win', async () => {
    const cluster = await EtcdCluster.start();
    const cut = await cluster.proxies();
    const a = holder(cluster.client(cut.endpoints), 'a', 2);
    a.holder.start();
    await vi.waitFor(() => expect(a.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    const b = holder(cluster.client(), 'b', 2);
    b.holder.start();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(b.holder.holding).toBe(false);

    const cutAt = now();
    cut.cut();
    await vi.waitFor(() => expect(b.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    const aEnd = Math.max(...a.log.windows.map((w) => w.end));
    const bStart = b.log.windows[0]?.start as number;
    // a's last window closed (by its own clock reading, with no word from etcd) before b's opened.
    expect(aEnd).toBeLessThanOrEqual(bStart);
    expect(aEnd).toBeLessThan(cutAt + 2_000);
    expect(a.holder.mayGrant()).toBe(false);
    expect(overlaps([a.log, b.log])).toEqual([]);

    // Healed: a learns its lease is gone, takes a new one, and finds b holding.
    cut.heal();
    await vi.waitFor(() => expect(a.holder.seenHolder).toBe('b'), { timeout: 10_000, interval: 20 });
    expect(a.holder.holding).toBe(false);
    expect(overlaps([a.log, b.log])).toEqual([]);
    console.log(`cut at +0: a stopped granting at +${(aEnd - cutAt).toFixed(0)} ms, b started at +${(bStart - cutAt).toFixed(0)} ms`);
  });

  it('an etcd member killed (the raft leader) does not interrupt the holder', async () => {
    const cluster = await EtcdCluster.start();
    // A TTL well above etcd's election (1 to 2 election timeouts of 1 s) plus a keep-alive interval.
    // One client per endpoint, as baton serve gives it: after a failed call it moves to the next
    // member (one client over all picks one at random per call, and a call to the dead member
    // waits out its deadline; with each keep-alive confirmed by a read, that took two rounds).
    const a = holder(
      cluster.endpoints.map((e) => cluster.client([e])),
      'a',
      5,
    );
    a.holder.start();
    await vi.waitFor(() => expect(a.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    const leader = await cluster.leaderIndex();
    const killedAt = now();
    await cluster.kill9(leader);
    await cluster.waitWritable(10_000);
    // Two TTLs after the kill, the holder still grants, in the one window it had before.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, killedAt + 10_000 - now())));
    expect(a.holder.mayGrant()).toBe(true);
    expect(a.log.windows).toHaveLength(1);
    expect(a.log.within(killedAt, now())).toHaveLength(1);
  });

  it('etcd without quorum: nobody holds; holding resumes when quorum returns', async () => {
    const cluster = await EtcdCluster.start();
    const a = holder(cluster.client(), 'a', 2);
    const b = holder(cluster.client(), 'b', 2);
    started(a.holder, b.holder);
    await vi.waitFor(() => expect(a.holder.mayGrant() || b.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    // The two followers go, so the member left is the raft leader: the hard case. etcd 3.4's leader
    // answers keep-alives until it notices it lost quorum (CheckQuorum: one to two election
    // timeouts; seen here on a loaded machine: 0.6 to 1.7 s), so the last window can close TTL + 2 election
    // timeouts after the loss. That is safe: a new leader gives every lease its TTL plus an election
    // timeout again when it takes over (etcd PR #4778), so no other node can win before it ends.
    const leader = await cluster.leaderIndex();
    const lostAt = now();
    for (const i of [0, 1, 2].filter((i) => i !== leader)) await cluster.kill9(i);
    // Every window closes (within a TTL and two election timeouts of the loss, on an idle machine),
    // and none opens again while quorum is gone.
    await vi.waitFor(() => expect(a.holder.mayGrant() || b.holder.mayGrant()).toBe(false), { timeout: 10_000, interval: 10 });
    const closedAt = now();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const restartAt = now();
    const windows = [...a.log.windows, ...b.log.windows];
    const closedBy = Math.max(...windows.map((w) => w.end)) - lostAt;
    expect([...a.log.within(closedAt, restartAt), ...b.log.within(closedAt, restartAt)]).toEqual([]);
    expect(a.holder.mayGrant() || b.holder.mayGrant()).toBe(false);
    console.log(`quorum lost at +0: the last window closed at +${closedBy.toFixed(0)} ms (TTL 2,000 ms, election timeout 1,000 ms)`);

    cluster.restart((leader + 1) % 3);
    await vi.waitFor(() => expect(a.holder.mayGrant() || b.holder.mayGrant()).toBe(true), { timeout: 20_000, interval: 20 });
    expect(overlaps([a.log, b.log])).toEqual([]);
  });

  it('with an in-sync set: only its members win, and a new active stores an empty set before it holds', async () => {
    const cluster = await EtcdCluster.start();
    const IN_SYNC = 'baton/test/in-sync';
    const etcd = cluster.client();
    const a = holder(cluster.client(), 'a', 2, IN_SYNC);
    a.holder.start();
    // No set ever stored: anyone may win; the winner stores [] first.
    await vi.waitFor(() => expect(a.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    expect(await etcd.get(IN_SYNC).string()).toBe('[]');
    expect(await a.holder.storeInSync(['b'])).toBe(true);

    const c = holder(cluster.client(), 'c', 2, IN_SYNC);
    c.holder.start();
    await vi.waitFor(() => expect(c.holder.electable).toBe(false), { timeout: 5_000, interval: 10 });
    // A node that does not hold the role cannot change the set.
    expect(await c.holder.storeInSync(['c'])).toBe(false);

    // The role is free and c alone campaigns for a while: it never wins.
    await a.holder.resign();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(c.holder.holding).toBe(false);
    expect(c.log.windows).toEqual([]);
    expect(await etcd.get('baton/test/active').string()).toBeNull();

    const b = holder(cluster.client(), 'b', 2, IN_SYNC);
    b.holder.start();
    await vi.waitFor(() => expect(b.holder.mayGrant()).toBe(true), { timeout: 5_000, interval: 10 });
    expect(await etcd.get(IN_SYNC).string()).toBe('[]');
    expect(overlaps([a.log, b.log, c.log])).toEqual([]);
  });
  it('a clean stop: only the holder writes it; its quiet key keeps everyone out until its lease runs out, then one wins', async () => {
    const cluster = await EtcdCluster.start();
    const IN_SYNC = 'baton/test/in-sync';
    const QUIET = 'baton/test/quiet';
    const etcd = cluster.client();
    const a = holder(cluster.client(), 'a', 2, IN_SYNC, QUIET);
    a.holder.start();
    await vi.waitFor(() => expect(a.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    const b = holder(cluster.client(), 'b', 2, IN_SYNC, QUIET);
    b.holder.start();
    await vi.waitFor(() => expect(b.holder.seenHolder).toBe('a'), { timeout: 5_000, interval: 10 });
    // Not the holder: nothing is written.
    expect(await b.holder.stopClean(3_000)).toBe(false);
    expect(await etcd.get(QUIET).string()).toBeNull();
    expect(await etcd.get(IN_SYNC).string()).toBe('[]');

    const stoppedAt = now();
    expect(await a.holder.stopClean(3_000)).toBe(true);
    expect(await etcd.get(IN_SYNC).string()).toBeNull();
    expect(await etcd.get(QUIET).string()).toBe('a');
    await a.holder.resign();
    // The role key is gone and no set is stored, yet b waits: it reads the quiet period.
    await vi.waitFor(() => expect(b.holder.quiet?.by).toBe('a'), { timeout: 5_000, interval: 10 });
    await vi.waitFor(() => expect(b.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    expect((b.log.windows[0]?.start ?? 0) - stoppedAt).toBeGreaterThanOrEqual(3_000);
    expect(b.holder.quiet).toBeNull();
    expect(await etcd.get(IN_SYNC).string()).toBe('[]');
  });

  it('a clean stop is not undone by an in-sync write: one on its way lands first, none is sent after', async () => {
    const cluster = await EtcdCluster.start();
    const IN_SYNC = 'baton/test/in-sync';
    const etcd = cluster.client();
    const a = holder(cluster.client(), 'a', 2, IN_SYNC, 'baton/test/quiet');
    a.holder.start();
    await vi.waitFor(() => expect(a.holder.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    // The keeper's write, sent just before the node stops: it may reach etcd after the stop's own.
    const before = a.holder.storeInSync(['b']);
    expect(await a.holder.stopClean(0)).toBe(true);
    expect(await before).toBe(true);
    expect(await etcd.get(IN_SYNC).string()).toBeNull();
    // Still holding the role key until it resigns, and its keeper still running: nothing is written.
    expect(a.holder.holding).toBe(true);
    expect(await a.holder.storeInSync([])).toBe(false);
    expect(await etcd.get(IN_SYNC).string()).toBeNull();
  });
});

describe('a stale etcd leader (design rule 2)', () => {
  it('an isolated etcd leader answers keep-alives alone, and they extend nothing: each counts only once a quorum read confirms it', {
    timeout: 60_000,
  }, async () => {
    const cluster = await EtcdCluster.start();
    const leader = await cluster.leaderIndex();
    const untils: { at: number; until: number }[] = [];
    const a = new EtcdRoleHolder({
      // Only the leader's endpoint: every keep-alive goes to it, before and after it loses its followers.
      client: cluster.client([cluster.member(leader).clientUrl]),
      key: 'baton/test/active',
      nodeId: 'a',
      ttlSeconds: 2,
      now,
      onEvent: (e) => {
        if (e.kind === 'until') untils.push({ at: e.at, until: e.until });
      },
    });
    onTestFinished(() => a.halt());
    a.start();
    await vi.waitFor(() => expect(a.mayGrant()).toBe(true), { timeout: 10_000, interval: 10 });
    // Keep-alives a third of a TTL apart for a while: the permission moves on with them.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(untils.length).toBeGreaterThan(1);

    // The leader loses its followers: it goes on answering keep-alives from memory for up to two
    // election timeouts (0.6 to 1.7 s seen), but no quorum read can be answered.
    const isolatedAt = now();
    for (const i of [0, 1, 2].filter((i) => i !== leader)) await cluster.kill9(i);
    const ttlMs = a.grantedTtlMs;
    await new Promise((resolve) => setTimeout(resolve, 3 * ttlMs));
    // No keep-alive sent after the isolation raised the permission: every bound is one a keep-alive
    // sent before it proved (sent at S: S + TTL less the margins).
    const bound = isolatedAt + ttlMs * (1 - 0.01) - 50;
    const latest = Math.max(...untils.map((u) => u.until));
    console.log(`isolated at +0: the permission ended at +${Math.round(latest - isolatedAt)} ms (bound +${Math.round(bound - isolatedAt)} ms)`);
    expect(latest).toBeLessThanOrEqual(bound);
    expect(a.mayGrant()).toBe(false);
  });
});
