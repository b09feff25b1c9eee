// Random lives of a promoted node's lock table with resumable claims between connections
// (kept by keepDetached), clients that come back (RESUME, with the right key or a wrong one),
// new clients, heartbeats, closes and time. Checked after every step: one holder per lock, grants
// in FIFO order of the queue as it stood, tokens that only grow, no detached claim alive past its
// lease, and a failed RESUME that changes nothing. Claims whose connection is reset (detach) wait
// at most MAX_PARK_MS, and the engine's count of claims between connections stays exact.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { BETWEEN_CONNECTIONS, CarriedClaims } from './carried-claims.ts';
import type { Claim } from './claim.ts';
import type { LockEvent } from './events.ts';
import { engineFixture, Owner } from './testing/engine-fixture.ts';

const LOCKS = ['a', 'b'] as const;
/** The detach limit's maxMs here: shorter than some leases, longer than others. */
const MAX_PARK_MS = 250;

type Op =
  | { kind: 'resume'; pick: number; wrongKey: boolean }
  | { kind: 'acquire'; lock: number; leaseMs: number }
  | { kind: 'touch' | 'end' | 'detach'; pick: number }
  | { kind: 'tick'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('resume' as const), pick: fc.nat(), wrongKey: fc.boolean() }),
  fc.record({ kind: fc.constant('acquire' as const), lock: fc.nat({ max: 1 }), leaseMs: fc.constantFrom(100, 300) }),
  fc.record({ kind: fc.constantFrom('touch' as const, 'end' as const, 'detach' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(1, 30, 80, 200) }),
);

/**
 * Replicated claims before the promotion: per lock, a holder or not, and waiters, each with a lease left;
 * `freed`: the holder was released after its waiters queued, during the old active's handoff (no grant followed).
 */
const tableArb = fc.array(
  fc.record({
    held: fc.boolean(),
    freed: fc.boolean(),
    remaining: fc.constantFrom(50, 150, 400),
    waiters: fc.array(fc.constantFrom(50, 150, 400), { maxLength: 4 }),
  }),
  { minLength: 2, maxLength: 2 },
);

function hashOf(id: number): string {
  return id.toString(16).padStart(64, '0');
}

function run(table: { held: boolean; freed: boolean; remaining: number; waiters: number[] }[], ops: Op[]): void {
  const { engine, clock, tick } = engineFixture({ startCeiling: 1_000n });
  engine.limitDetached({ maxMs: MAX_PARK_MS, maxClaims: 10_000 });
  let id = 1;
  table.forEach((t, i) => {
    const lock = LOCKS[i] as string;
    let holderId = 0;
    if (t.held) {
      const claimId = id++;
      holderId = claimId;
      engine.replicaGrant({
        lock,
        claimId,
        token: BigInt(claimId),
        protocol: 'session',
        client: 'c',
        leaseMs: 400,
        sliding: true,
        remainingMs: t.remaining,
        heldForMs: 0,
        handoverMs: null,
        handoverCause: null,
        keyHash: hashOf(claimId),
      });
    }
    for (const remaining of t.waiters) {
      const claimId = id++;
      engine.replicaEnqueue({
        lock,
        claimId,
        protocol: 'session',
        client: 'c',
        leaseMs: 400,
        sliding: true,
        waitingForMs: 0,
        waitRemainingMs: null,
        keyHash: hashOf(claimId),
      });
      engine.replicaRenew(lock, claimId, remaining);
    }
    if (t.held && t.freed) engine.replicaEndHolder(lock, holderId, 'release');
  });
  // The promotion, as cluster-transitions.ts does it.
  engine.holdHandovers();
  const carried = new CarriedClaims();
  carried.carried = engine.keepDetached(carried);
  engine.fileFreeQueues();
  engine.releaseHandovers();
  // The model: each lock's queue in FIFO order (claim ids), its holder, the last token.
  const queues = new Map<string, number[]>(
    LOCKS.map((l) => [
      l,
      engine
        .lock(l)
        ?.queue()
        .map((c) => c.id) ?? [],
    ]),
  );
  const holders = new Map<string, number | null>(LOCKS.map((l) => [l, engine.lock(l)?.holder?.id ?? null]));
  let lastToken = 1_000n;
  const claims: Claim[] = [...engine.resumableClaims()];
  engine.subscribe((e: LockEvent) => {
    if (e.type === 'reset') throw new Error('no reset here');
    const q = queues.get(e.lock) as number[];
    switch (e.type) {
      case 'grant':
        expect(holders.get(e.lock), `second holder on ${e.lock}`).toBeNull();
        if (q.length > 0) expect(e.claimId, 'grant out of FIFO order').toBe(q[0]);
        if (q[0] === e.claimId) q.shift();
        expect(e.token > lastToken).toBe(true);
        lastToken = e.token;
        holders.set(e.lock, e.claimId);
        return;
      case 'enqueue':
        q.push(e.claimId);
        return;
      case 'release':
      case 'expire':
      case 'force-release':
        expect(holders.get(e.lock)).toBe(e.claimId);
        holders.set(e.lock, null);
        return;
      case 'leave-queue':
      case 'kick':
        q.splice(q.indexOf(e.claimId), 1);
        return;
    }
  });
  const picked = (n: number): Claim | undefined => claims[n % Math.max(1, claims.length)];
  for (const op of ops) {
    switch (op.kind) {
      case 'resume': {
        const c = picked(op.pick);
        if (c === undefined || c.keyHash === null) break;
        const before = [c.state, c.owner, c.expiresAt, c.lock.holder?.id, c.lock.queue().map((w) => w.id)];
        const got = engine.resume(c.name, op.wrongKey ? hashOf(999_999) : c.keyHash, new Owner());
        if (op.wrongKey) {
          expect(got).toBeNull();
          // A wrong key ends nothing (a lapsed lease may have ended it on its own, as advance() would).
          if (c.state !== 'ended') expect([c.state, c.owner, c.expiresAt, c.lock.holder?.id, c.lock.queue().map((w) => w.id)]).toEqual(before);
        } else if (got !== null) {
          expect(got).toBe(c);
        }
        break;
      }
      case 'acquire':
        claims.push(
          engine.acquire({
            name: LOCKS[op.lock] as string,
            owner: new Owner(),
            protocol: 'session',
            client: 'c',
            leaseMs: op.leaseMs,
            waitMs: 0,
            sliding: true,
            keyHash: hashOf(100_000 + claims.length),
          }),
        );
        break;
      case 'touch': {
        const c = picked(op.pick);
        // Only a connection touches its claim: none stands behind a claim between connections.
        if (c !== undefined && c.owner.detached !== true) engine.touch(c);
        break;
      }
      case 'end': {
        const c = picked(op.pick);
        if (c !== undefined && c.owner.detached !== true) engine.end(c);
        break;
      }
      case 'detach': {
        // Its connection was reset: kept between connections (or ended, as a close ends it).
        const c = picked(op.pick);
        if (c !== undefined && c.owner.detached !== true && !engine.detach(c, BETWEEN_CONNECTIONS)) engine.end(c);
        break;
      }
      case 'tick':
        tick(op.ms);
        break;
    }
    const waiting = claims.filter((c) => c.state !== 'ended' && c.owner.awaitingResume === true);
    expect(engine.detachedCount).toBe(waiting.length);
    for (const c of waiting) expect(c.expiresAt - clock.now()).toBeLessThanOrEqual(MAX_PARK_MS);
    // No claim between connections outlives its lease.
    for (const c of claims) if (c.owner === carried && c.state !== 'ended') expect(c.expiresAt > clock.now()).toBe(true);
    for (const l of LOCKS) expect(engine.lock(l)?.holder?.id ?? null).toBe(holders.get(l));
    // Nothing is stranded: a lock with waiters has a holder.
    for (const l of LOCKS)
      if (engine.lock(l)?.holder === null)
        expect(
          engine
            .lock(l)
            ?.queue()
            .map((c) => c.id),
          `${l} free with a queue`,
        ).toEqual([]);
  }
  expect(carried.resumed + carried.expired + carried.ended).toBeLessThanOrEqual(carried.carried);
}

it('detached claims never break FIFO order, mutual exclusion or their lease', () => {
  fc.assert(fc.property(tableArb, fc.array(opArb, { maxLength: 60 }), run), { numRuns: 300 });
});
