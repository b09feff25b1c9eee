// Mirroring: a random workload runs on engine A (the active); every event A emits is fed to
// engine B's replica operations, as the replication stream would. After every step B shows
// the same holders (name, claim id, token) and the same queues as A, and no B lease ends
// before A's. Then B is promoted (waiters and session holders dropped) and must go on serving.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Claim, ClaimOwner } from './claim.ts';
import { FakeClock } from './clock.ts';
import type { LockEvent } from './events.ts';
import { LockEngine } from './lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../tokens/token-source.ts';

type Op =
  | { kind: 'acquire'; key: string; sliding: boolean; leaseMs: number; waitMs: number; deliverable: boolean }
  | { kind: 'release' | 'end' | 'touch' | 'kick' | 'force'; pick: number }
  | { kind: 'tick'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      key: fc.constantFrom('a', 'a', 'b', 'c'),
      sliding: fc.boolean(),
      leaseMs: fc.constantFrom(50, 100, 200),
      waitMs: fc.constantFrom(0, 0, 40, 150),
      deliverable: fc.constantFrom(true, true, true, false),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constantFrom('release' as const, 'end' as const, 'touch' as const, 'kick' as const, 'force' as const), pick: fc.nat() }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(0, 1, 20, 50, 120) }) },
);

const owner = (deliverable: boolean): ClaimOwner => ({ onGranted: () => deliverable, onEnded: () => {} });

/** Feeds A's events to B, as a standby applies the replication stream. */
function mirror(a: LockEngine, b: LockEngine, e: LockEvent): void {
  switch (e.type) {
    case 'grant':
      b.replicaGrant({ ...e, remainingMs: e.leaseMs, heldForMs: 0 });
      return;
    case 'release':
      expect(b.replicaEndHolder(e.lock, e.claimId, e.cause)).toBe(true);
      return;
    case 'expire':
    case 'force-release':
      expect(b.replicaEndHolder(e.lock, e.claimId, e.type)).toBe(true);
      return;
    case 'enqueue': {
      // The event lacks the lease; the stream sends the claim, which is A's queue tail right now.
      const claim = a.lock(e.lock)?.tail as Claim;
      expect(claim.id).toBe(e.claimId);
      const waitRemainingMs = e.waitDeadline === null ? null : e.waitDeadline - e.at;
      b.replicaEnqueue({ ...e, leaseMs: claim.leaseMs, sliding: claim.sliding, waitingForMs: 0, waitRemainingMs });
      return;
    }
    case 'leave-queue':
      expect(b.replicaLeaveQueue(e.lock, e.claimId, e.reason)).toBe(true);
      return;
    case 'kick':
      expect(b.replicaLeaveQueue(e.lock, e.claimId, 'kick')).toBe(true);
      return;
    case 'reset':
      b.reset();
  }
}

function view(engine: LockEngine): string[] {
  const out: string[] = [];
  for (const lock of engine.allLocks()) {
    const h = lock.holder;
    out.push(
      `${lock.name} holder=${h === null ? '-' : `${h.id}/${h.token}`} queue=${lock
        .queue()
        .map((c) => c.id)
        .join(',')}`,
    );
  }
  return out.sort();
}

function run(ops: Op[]): void {
  const clock = new FakeClock(0);
  const a = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 7n));
  const b = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 7n));
  a.subscribe((e) => mirror(a, b, e));
  const claims: Claim[] = [];
  const live = () => claims.filter((c) => c.state !== 'ended');
  const pick = (n: number, state?: 'holding' | 'waiting') => {
    const pool = live().filter((c) => state === undefined || c.state === state);
    return pool.length === 0 ? undefined : pool[n % pool.length];
  };

  for (const op of ops) {
    if (op.kind === 'acquire') {
      claims.push(
        a.acquire({
          name: op.key,
          owner: owner(op.deliverable),
          protocol: op.sliding ? 'session' : 'keyed',
          client: 'c',
          leaseMs: op.leaseMs,
          waitMs: op.waitMs,
          sliding: op.sliding,
        }),
      );
    } else if (op.kind === 'tick') {
      clock.advance(op.ms);
      a.advance(); // B never advances while it mirrors
    } else {
      const c = pick(op.pick, op.kind === 'release' || op.kind === 'force' ? 'holding' : op.kind === 'kick' ? 'waiting' : undefined);
      if (c === undefined) continue;
      if (op.kind === 'release') a.release(c.name, c.token);
      else if (op.kind === 'end') a.end(c);
      else if (op.kind === 'kick') a.kick(c.name, c.id);
      else if (op.kind === 'force') a.forceRelease(c.name, c.token);
      else {
        a.touch(c);
        // A heartbeat is no event: the stream reports a holder's new lease end on its own.
        if (c.state === 'holding') b.replicaRenew(c.name, c.id, c.expiresAt - clock.now());
      }
    }
    expect(view(b)).toEqual(view(a));
    expect([b.heldCount, b.waiterCount, b.lockCount]).toEqual([a.heldCount, a.waiterCount, a.lockCount]);
    for (const lock of a.allLocks()) {
      if (lock.holder !== null) expect(b.lock(lock.name)?.holder?.expiresAt).toBeGreaterThanOrEqual(lock.holder.expiresAt);
    }
  }
  promote(a, b, clock, claims);
}

/** The promotion's cleanup, then B serves: release by token, expiry no earlier than A's, fresh ids and tokens. */
function promote(a: LockEngine, b: LockEngine, clock: FakeClock, claims: Claim[]): void {
  const maxId = Math.max(0, ...claims.map((c) => c.id));
  const maxToken = claims.reduce((m, c) => (c.token > m ? c.token : m), 0n);
  const events: LockEvent[] = [];
  b.subscribe((e) => events.push(e));
  const locks = [...b.allLocks()];
  for (const lock of locks) for (const w of lock.queue()) b.end(w);
  for (const lock of locks) if (lock.holder?.protocol === 'session') b.end(lock.holder);
  expect(events.filter((e) => e.type === 'grant')).toEqual([]);
  expect(b.waiterCount).toBe(0);

  const kept = [...b.allLocks()].map((l) => l.holder as Claim);
  expect(kept.every((h) => h.protocol === 'keyed')).toBe(true);
  kept.forEach((h, i) => {
    if (i % 2 === 0) {
      expect(b.release(h.name, h.token)).toBe('ok');
      return;
    }
    const aEnd = a.lock(h.name)?.holder?.expiresAt as number;
    expect(h.expiresAt).toBeGreaterThanOrEqual(aEnd);
  });
  // Just before the earliest remaining lease end nothing lapses; at the latest, everything has.
  const ends = kept.filter((h) => h.state === 'holding').map((h) => h.expiresAt);
  if (ends.length > 0) {
    clock.advance(Math.max(0, Math.min(...ends) - 1 - clock.now()));
    b.advance();
    expect(b.heldCount).toBe(ends.length);
    clock.advance(Math.max(...ends) - clock.now());
    b.advance();
  }
  expect([b.heldCount, b.lockCount]).toEqual([0, 0]);

  const first = b.acquire({ name: 'a', owner: owner(true), protocol: 'keyed', client: 'new', leaseMs: 100, waitMs: 0, sliding: false });
  const second = b.acquire({ name: 'a', owner: owner(true), protocol: 'keyed', client: 'new', leaseMs: 100, waitMs: 0, sliding: false });
  expect(first.id).toBeGreaterThan(maxId);
  expect(first.token).toBeGreaterThan(maxToken);
  expect(b.release('a', first.token)).toBe('ok');
  expect(second.state).toBe('holding');
  expect(second.token).toBeGreaterThan(first.token);
}

it('mirrors every holder and queue of the active, and serves on correctly once promoted', () => {
  fc.assert(fc.property(fc.array(opArb, { minLength: 1, maxLength: 80 }), run), { numRuns: 400 });
});
