import { describe, expect, it } from 'vitest';
import { decideRole, holdsPartialTable, type PeerState, type SelfState } from './role-decider.ts';

const self = (over: Partial<SelfState> = {}): SelfState => ({
  id: 'b',
  priority: 1,
  instance: 'i-self',
  phase: 'standby',
  syncedWith: 'i-a',
  yielded: false,
  following: 'a',
  lastActiveInstance: 'i-a',
  discovering: false,
  leaving: false,
  fresh: false,
  returnHoldDownMs: 10_000,
  ...over,
});
const peer = (id: string, priority: number, over: Partial<PeerState> = {}): PeerState => ({
  id,
  priority,
  instance: `i-${id}`,
  phase: 'standby',
  syncedWith: 'i-a',
  yielded: false,
  leaving: false,
  fresh: false,
  partial: false,
  following: null,
  lagEvents: 0,
  // Steady for longer than the hold-down unless a test says otherwise.
  steadyMs: 60_000,
  ...over,
});

describe('decideRole', () => {
  it('a standby follows the highest-priority active it hears', () => {
    expect(decideRole(self({ following: null }), [peer('a', 0, { phase: 'active' }), peer('c', 2, { phase: 'active' })])).toEqual({ kind: 'follow', id: 'a' });
    expect(decideRole(self({ following: 'a' }), [peer('a', 0, { phase: 'active' })])).toEqual({ kind: 'stay' });
    // A handing-off active is still the active.
    expect(decideRole(self({ following: null }), [peer('a', 0, { phase: 'handing-off' })])).toEqual({ kind: 'follow', id: 'a' });
  });

  it('with the active gone, the highest-priority synced standby promotes and the others wait', () => {
    expect(decideRole(self({ priority: 1 }), [peer('c', 2)])).toEqual({ kind: 'promote' });
    expect(decideRole(self({ priority: 2 }), [peer('b', 1)])).toEqual({ kind: 'stay' });
  });

  it('prefers a node synced with the last active over a higher-priority one that is not', () => {
    const fresh = peer('a', 0, { syncedWith: null, phase: 'syncing' });
    expect(decideRole(self({ priority: 1 }), [fresh])).toEqual({ kind: 'promote' });
    // Nobody synced: the highest priority alive takes it, so service goes on.
    expect(decideRole(self({ priority: 1, syncedWith: null }), [peer('a', 0, { syncedWith: null })])).toEqual({ kind: 'stay' });
  });

  it('prefers nodes that have not yielded, unless only yielded ones are left', () => {
    expect(decideRole(self({ priority: 1 }), [peer('a', 0, { yielded: true })])).toEqual({ kind: 'promote' });
    expect(decideRole(self({ priority: 1, yielded: true }), [peer('c', 2)])).toEqual({ kind: 'stay' });
    expect(decideRole(self({ priority: 1, yielded: true }), [])).toEqual({ kind: 'promote' });
  });

  it('waits while discovering and while a peer is promoting', () => {
    expect(decideRole(self({ discovering: true, phase: 'discovering' }), [])).toEqual({ kind: 'stay' });
    expect(decideRole(self({ priority: 0 }), [peer('b', 1, { phase: 'promoting' })])).toEqual({ kind: 'stay' });
  });

  it('a fresh cluster: the highest priority promotes once discovery is over', () => {
    const fresh = { syncedWith: null, lastActiveInstance: null, following: null, phase: 'discovering' as const };
    expect(decideRole(self({ ...fresh, priority: 0 }), [peer('b', 1, { syncedWith: null, phase: 'discovering' })])).toEqual({ kind: 'promote' });
    expect(decideRole(self({ ...fresh, priority: 1 }), [peer('a', 0, { syncedWith: null, phase: 'discovering' })])).toEqual({ kind: 'stay' });
  });

  it('two actives: the lower-priority one steps down, the higher one stays', () => {
    expect(decideRole(self({ phase: 'active', priority: 1 }), [peer('a', 0, { phase: 'active' })])).toEqual({ kind: 'step-down', to: 'a' });
    expect(decideRole(self({ phase: 'active', priority: 0 }), [peer('b', 1, { phase: 'active' })])).toEqual({ kind: 'stay' });
  });

  it('an active hands off to a returning higher-priority standby once it is synced and caught up', () => {
    const me = self({ phase: 'active', priority: 1, instance: 'i-b' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-b', lagEvents: 0 })])).toEqual({ kind: 'handoff', to: 'a' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-b', lagEvents: 3 })])).toEqual({ kind: 'stay' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: null, phase: 'syncing' })])).toEqual({ kind: 'stay' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-b', yielded: true })])).toEqual({ kind: 'stay' });
    expect(decideRole(me, [peer('c', 2, { syncedWith: 'i-b' })])).toEqual({ kind: 'stay' });
  });

  it('hands back to a returning node only once it has been steady for the hold-down, and only to one not yielded', () => {
    const me = self({ phase: 'active', priority: 2, instance: 'i-c', returnHoldDownMs: 10_000 });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-c', steadyMs: 30 })])).toEqual({ kind: 'stay' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-c', steadyMs: 9_999 })])).toEqual({ kind: 'stay' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-c', steadyMs: 10_000 })])).toEqual({ kind: 'handoff', to: 'a' });
    // Not steady (the active saw a break): no return, however long ago it first synced.
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-c', steadyMs: null })])).toEqual({ kind: 'stay' });
    // A node still held down does not keep the role from a steady one of higher priority than this active.
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-c', steadyMs: 500 }), peer('b', 1, { syncedWith: 'i-c' })])).toEqual({ kind: 'handoff', to: 'b' });
    // A hold-down of 0 is the return at once.
    expect(decideRole(self({ ...me, returnHoldDownMs: 0 }), [peer('a', 0, { syncedWith: 'i-c', steadyMs: 0 })])).toEqual({ kind: 'handoff', to: 'a' });
  });

  it('between two actives, one that came up on its own with empty state steps down, whatever the priorities', () => {
    const returning = self({ phase: 'active', priority: 0, instance: 'i-a', fresh: true });
    expect(decideRole(returning, [peer('b', 1, { phase: 'active' })])).toEqual({ kind: 'step-down', to: 'b' });
    const b = self({ phase: 'active', priority: 1, instance: 'i-b' });
    expect(decideRole(b, [peer('a', 0, { phase: 'active', fresh: true })])).toEqual({ kind: 'stay' });
    // Both fresh (two nodes started apart): priority decides, as for any split brain.
    expect(decideRole(self({ phase: 'active', priority: 1, fresh: true }), [peer('a', 0, { phase: 'active', fresh: true })])).toEqual({
      kind: 'step-down',
      to: 'a',
    });
  });

  it('followers prefer an active with the cluster state over one that came up on its own', () => {
    const c = self({ priority: 2, following: null, lastActiveInstance: 'i-b', syncedWith: 'i-b' });
    expect(decideRole(c, [peer('a', 0, { phase: 'active', fresh: true }), peer('b', 1, { phase: 'active' })])).toEqual({ kind: 'follow', id: 'b' });
  });

  it('no node promotes while a peer follows an active it hears (an active this node cannot reach yet)', () => {
    const restarted = self({ id: 'a', priority: 0, phase: 'discovering', following: null, lastActiveInstance: null, syncedWith: null });
    expect(decideRole(restarted, [peer('c', 2, { following: 'b' })])).toEqual({ kind: 'stay' });
    // A standby of the old active too: b just handed off to a, which c does not hear yet.
    expect(
      decideRole(self({ id: 'c', priority: 2, lastActiveInstance: 'i-b', syncedWith: 'i-b' }), [peer('b', 1, { phase: 'syncing', following: 'a' })]),
    ).toEqual({ kind: 'stay' });
    // Once that peer no longer hears its active, the usual rules apply.
    expect(decideRole(restarted, [peer('c', 2, { following: null, syncedWith: null })])).toEqual({ kind: 'promote' });
  });

  it('two nodes that follow each other do not wait for each other: exactly one of the three promotes', () => {
    // Found by the chaos run (seed 3): a, frozen while active, sent a stale "active" status as it
    // woke; b, active meanwhile, stepped down to follow a, while a (stepping out after the freeze)
    // followed b. Each then waited for the other, and the cluster had no active for 15 s.
    const a = self({ id: 'a', priority: 0, instance: 'i-a', phase: 'syncing', following: 'b', lastActiveInstance: 'i-b', syncedWith: null });
    const b = self({ id: 'b', priority: 1, instance: 'i-b', phase: 'syncing', following: 'a', lastActiveInstance: 'i-a', syncedWith: null });
    const c = self({ id: 'c', priority: 2, instance: 'i-c', phase: 'syncing', following: 'a', lastActiveInstance: 'i-a', syncedWith: null });
    const asPeer = (s: SelfState) => peer(s.id, s.priority, { instance: s.instance, phase: s.phase, following: s.following, syncedWith: s.syncedWith });
    const decisions = [a, b, c].map((me) => decideRole(me, [a, b, c].filter((o) => o !== me).map(asPeer)));
    expect(decisions).toEqual([{ kind: 'promote' }, { kind: 'stay' }, { kind: 'stay' }]);
    // A peer following a node this one does not hear still holds it back (that active may be out of its reach).
    expect(
      decideRole(
        a,
        [asPeer(c)].map((p) => ({ ...p, following: 'd' })),
      ),
    ).toEqual({ kind: 'stay' });
  });

  it('a node that is shutting down is never handed the role, nor takes it', () => {
    const me = self({ phase: 'active', priority: 1, instance: 'i-b' });
    expect(decideRole(me, [peer('a', 0, { syncedWith: 'i-b', leaving: true })])).toEqual({ kind: 'stay' });
    expect(decideRole(self({ priority: 1 }), [peer('a', 0, { leaving: true })])).toEqual({ kind: 'promote' });
    expect(decideRole(self({ priority: 0, leaving: true }), [peer('b', 1)])).toEqual({ kind: 'stay' });
  });

  it('a new active does not step down to the node that just handed off to it, and followers prefer the new one', () => {
    const me = self({ phase: 'active', priority: 1, instance: 'i-b' });
    expect(decideRole(me, [peer('a', 0, { phase: 'handing-off' })])).toEqual({ kind: 'stay' });
    const c = self({ priority: 2, following: 'a' });
    expect(decideRole(c, [peer('a', 0, { phase: 'handing-off' }), peer('b', 1, { phase: 'active' })])).toEqual({ kind: 'follow', id: 'b' });
  });

  it('a node in the middle of promoting or handing off keeps going', () => {
    expect(decideRole(self({ phase: 'promoting' }), [peer('a', 0, { phase: 'active' })])).toEqual({ kind: 'stay' });
    expect(decideRole(self({ phase: 'handing-off', priority: 1 }), [peer('a', 0, { phase: 'active' })])).toEqual({ kind: 'stay' });
  });

  describe('a node that holds only part of the last active table (a join cut short)', () => {
    // b followed a and its snapshot was under way (or not begun) when a went silent.
    const midJoin = self({ phase: 'syncing', syncedWith: null, lastActiveInstance: 'i-a', following: null });

    it('does not promote while that active is not heard, even with nobody else alive', () => {
      // Found by the 5M join bench: b froze applying the snapshot, was cut off, heard nobody
      // after its freeze, and promoted with 8,658 of millions of locks.
      expect(holdsPartialTable(midJoin, [])).toBe(true);
      expect(decideRole(midJoin, [])).toEqual({ kind: 'stay' });
      expect(decideRole({ ...midJoin, priority: 0 }, [peer('c', 2, { syncedWith: null })])).toEqual({
        kind: 'stay',
      });
    });

    it('a re-sync starts the table over: a standby that was in sync holds it back the same way', () => {
      // syncedWith is cleared when the new snapshot begins (peer-message-handler.ts).
      expect(decideRole(self({ phase: 'syncing', syncedWith: null, following: null }), [])).toEqual({ kind: 'stay' });
    });

    it('lets the others take the role: a peer that says it holds part of a table is no candidate', () => {
      // a restarted (a new instance, no memory of the cluster): it promotes, with an empty table, and b syncs from it.
      const aBack = self({ id: 'a', priority: 0, instance: 'i-a2', phase: 'discovering', syncedWith: null, lastActiveInstance: null, following: null });
      expect(decideRole(aBack, [peer('b', 1, { phase: 'syncing', syncedWith: null, partial: true })])).toEqual({ kind: 'promote' });
      // A lower-priority node does not wait for a higher-priority one that will not take the role.
      const c = self({ id: 'c', priority: 2, instance: 'i-c', phase: 'discovering', syncedWith: null, lastActiveInstance: null, following: null });
      expect(decideRole(c, [peer('b', 1, { phase: 'syncing', syncedWith: null, partial: true })])).toEqual({ kind: 'promote' });
      expect(decideRole(c, [peer('b', 1, { phase: 'syncing', syncedWith: null })])).toEqual({ kind: 'stay' });
      // A standby in sync with the last active takes over as before.
      expect(decideRole(self({ id: 'c', priority: 2, instance: 'i-c' }), [peer('b', 1, { phase: 'syncing', syncedWith: null, partial: true })])).toEqual({
        kind: 'promote',
      });
    });

    it('ends when an active is heard (it follows it), or when that active is heard and not active', () => {
      expect(decideRole(midJoin, [peer('a', 0, { phase: 'active' })])).toEqual({ kind: 'follow', id: 'a' });
      // a stepped out (a freeze of its own): it has its own state, and is the candidate.
      const aOut = peer('a', 0, { phase: 'discovering', syncedWith: 'i-a' });
      expect(holdsPartialTable(midJoin, [aOut])).toBe(false);
      expect(decideRole({ ...midJoin, priority: 1 }, [aOut])).toEqual({ kind: 'stay' });
      // a is back as another process: its table is gone, and b still does not serve the part it holds.
      expect(holdsPartialTable(midJoin, [peer('a', 0, { instance: 'i-a2', phase: 'discovering', syncedWith: null })])).toBe(true);
    });

    it('never holds back a node that was in sync, was active itself, or never followed anyone', () => {
      expect(holdsPartialTable(self(), [])).toBe(false);
      expect(decideRole(self(), [])).toEqual({ kind: 'promote' });
      expect(holdsPartialTable(self({ syncedWith: 'i-self', lastActiveInstance: 'i-self' }), [])).toBe(false);
      expect(holdsPartialTable(self({ syncedWith: null, lastActiveInstance: null }), [])).toBe(false);
    });
  });
});
