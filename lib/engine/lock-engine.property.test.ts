// Random operation sequences against the lock engine, checked after every step against a
// shadow model built from the event stream and the owner callbacks, and against what each
// operation must have done. The model encodes the spec, not the engine's internals.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Claim, ClaimOwner, EndReason } from './claim.ts';
import { FakeClock } from './clock.ts';
import type { ClaimEvent, LockEvent } from './events.ts';
import { LockEngine } from './lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../tokens/token-source.ts';

const KEYS = ['a', 'b', 'c'] as const;
/** live: takes grants; gone: cannot be delivered to; self-ending: ends its claim inside onGranted; retrying: asks again when the engine ends its claim. */
type OwnerKind = 'live' | 'gone' | 'self-ending' | 'retrying';

type Op =
  | { kind: 'acquire'; key: string; sliding: boolean; leaseMs: number; waitMs: number; owner: OwnerKind }
  | { kind: 'release' | 'end' | 'touch' | 'kick' | 'force-token'; pick: number }
  | { kind: 'force'; key: string }
  | { kind: 'clock' | 'tick'; ms: number }
  | { kind: 'advance' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      key: fc.constantFrom('a', 'a', 'a', 'b', 'c'),
      sliding: fc.boolean(),
      leaseMs: fc.constantFrom(50, 100, 200),
      waitMs: fc.constantFrom(0, 0, 40, 150),
      owner: fc.constantFrom<OwnerKind>('live', 'live', 'live', 'live', 'live', 'gone', 'self-ending', 'retrying'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('end' as const, 'touch' as const, 'kick' as const, 'force-token' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('force' as const), key: fc.constantFrom(...KEYS) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('clock' as const, 'tick' as const), ms: fc.constantFrom(0, 1, 20, 50, 120, 400) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'advance' as const }) },
);

interface Model {
  claim: Claim | null; // null until acquire returns
  id: number;
  key: string;
  sliding: boolean;
  leaseMs: number;
  waitDeadline: number;
  /** Lease end as the spec defines it (sliding: last live touch + lease). */
  expiresAt: number;
  state: 'waiting' | 'holding' | 'ended';
  grants: number;
  /** The reason the owner must be told next, set by the event that ended the claim. */
  owed: EndReason | null;
  owner: OwnerKind;
}

function run(ops: Op[]): void {
  const clock = new FakeClock(0);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 7n));
  const models: Model[] = [];
  const byId = new Map<number, Model>();
  const holder = new Map<string, Model | null>(KEYS.map((k) => [k, null]));
  const queue = new Map<string, Model[]>(KEYS.map((k) => [k, []]));
  const lastEnd = new Map<string, { at: number; cause: string }>();
  let lastToken = 0n;
  // Acquires under way, innermost last: an owner may acquire again from inside a callback, and
  // that acquire may run further callbacks (deadlines due) before its own claim exists.
  const pending: Array<Op & { kind: 'acquire' }> = [];
  let events: LockEvent[] = [];

  const queueDeadline = (m: Model) => Math.min(m.waitDeadline, m.sliding ? m.expiresAt : Infinity);
  const fresh = (id: number): Model => {
    const p = pending.pop();
    expect(p, `event for unknown claim ${id} outside an acquire`).toBeDefined();
    if (p === undefined) throw new Error('unreachable');
    const now = clock.now();
    const m: Model = {
      claim: null,
      id,
      key: p.key,
      sliding: p.sliding,
      leaseMs: p.leaseMs,
      waitDeadline: p.waitMs > 0 ? now + p.waitMs : Infinity,
      expiresAt: now + p.leaseMs,
      state: 'waiting',
      grants: 0,
      owed: null,
      owner: p.owner,
    };
    byId.set(id, m);
    models.push(m);
    return m;
  };
  const endHolder = (e: ClaimEvent & { token: bigint }, endedAt: number, cause: string) => {
    const m = byId.get(e.claimId) as Model;
    expect(holder.get(e.lock), `${e.type} of a claim that does not hold ${e.lock}`).toBe(m);
    expect(e.token).toBe(m.claim?.token ?? e.token);
    m.state = 'ended';
    holder.set(e.lock, null);
    // A grant its owner could not take ('gone') is no real holder: the next grant still counts
    // its handover from the end of the holder before it.
    if (!(e.type === 'release' && cause === 'disconnect' && m.owner === 'gone' && lastEnd.has(e.lock) && queueHadWaiters(e.lock))) {
      lastEnd.set(e.lock, { at: endedAt, cause });
    }
    return m;
  };
  const queueHadWaiters = (lock: string): boolean => (queue.get(lock) as Model[]).length > 0;
  const leave = (m: Model, lock: string) => {
    const q = queue.get(lock) as Model[];
    expect(q, `${m.id} left a queue it was not in`).toContain(m);
    q.splice(q.indexOf(m), 1);
    m.state = 'ended';
  };

  engine.subscribe((e) => {
    events.push(e);
    expect(e.at).toBe(clock.now());
    switch (e.type) {
      case 'grant': {
        const known = byId.get(e.claimId);
        const m = known ?? fresh(e.claimId);
        expect(m.state, `grant to ended claim ${m.id}`).not.toBe('ended');
        expect(holder.get(e.lock), `second holder on ${e.lock}`).toBeNull();
        expect(e.token).toBeGreaterThan(lastToken);
        lastToken = e.token;
        const q = queue.get(e.lock) as Model[];
        if (known === undefined) {
          expect(q).toEqual([]);
          expect([e.handoverCause, e.handoverMs, e.waitedMs]).toEqual([null, null, 0]);
        } else {
          expect(q[0], `grant out of FIFO order on ${e.lock}`).toBe(m);
          const end = lastEnd.get(e.lock) as { at: number; cause: string };
          expect([e.handoverCause, e.handoverMs]).toEqual([end.cause, e.at - end.at]);
          expect(queueDeadline(m), `grant to ${m.id} after it left the queue`).toBeGreaterThan(end.at);
          q.shift();
        }
        m.state = 'holding';
        m.grants++;
        if (!m.sliding) m.expiresAt = e.at + m.leaseMs;
        holder.set(e.lock, m);
        break;
      }
      case 'enqueue': {
        const m = fresh(e.claimId);
        const q = queue.get(e.lock) as Model[];
        expect(holder.get(e.lock) !== null || q.length > 0, 'queued behind nobody').toBe(true);
        q.push(m);
        expect(e.position).toBe(q.length);
        expect(e.waitDeadline).toBe(m.waitDeadline === Infinity ? null : m.waitDeadline);
        break;
      }
      case 'release': {
        const m = endHolder(e, e.at, e.cause);
        // A session's claim ends only through its owner (end) or with its owner told: never by a token.
        if (e.cause === 'release') expect(m.sliding, `session claim ${m.id} released by its token`).toBe(false);
        break;
      }
      case 'force-release':
        endHolder(e, e.at, 'force-release').owed = 'force-released';
        break;
      case 'expire': {
        const m = byId.get(e.claimId) as Model;
        expect(m.expiresAt, `expired ${m.id} before its lease ended`).toBeLessThanOrEqual(e.at);
        endHolder(e, m.expiresAt, 'expiry').owed = 'expired';
        break;
      }
      case 'leave-queue': {
        const m = byId.get(e.claimId) as Model;
        leave(m, e.lock);
        if (e.reason === 'timeout') expect(m.waitDeadline).toBeLessThanOrEqual(e.at);
        if (e.reason === 'expired') expect([m.sliding, m.expiresAt <= e.at, m.waitDeadline > e.at]).toEqual([true, true, true]);
        if (e.reason !== 'disconnect') m.owed = e.reason === 'timeout' ? 'wait-timeout' : 'expired';
        break;
      }
      case 'kick': {
        const m = byId.get(e.claimId) as Model;
        leave(m, e.lock);
        m.owed = 'kicked';
        break;
      }
    }
  });

  const ownerOf = (kind: OwnerKind): ClaimOwner => ({
    onGranted: (claim) => {
      const m = byId.get(claim.id) as Model;
      expect(m.state).toBe('holding');
      m.claim ??= claim;
      if (kind === 'self-ending') engine.end(claim);
      return kind === 'live' || kind === 'retrying';
    },
    onEnded: (claim, reason) => {
      const m = byId.get(claim.id) as Model;
      expect(reason, `owner of ${claim.id} told ${reason}`).toBe(m.owed);
      m.owed = null;
      if (kind === 'retrying') {
        pending.push({ kind: 'acquire', key: m.key, sliding: false, leaseMs: 100, waitMs: 0, owner: 'live' });
        const again = engine.acquire({ name: m.key, owner: ownerOf('live'), protocol: 'keyed', client: 'c', leaseMs: 100, waitMs: 0, sliding: false });
        (byId.get(again.id) as Model).claim = again;
      }
    },
  });

  for (const op of ops) {
    events = [];
    // Operations first run the deadlines already due (the engine's catch-up, covered by its own
    // unit tests); running them here keeps the model's expectations simple.
    if (op.kind === 'acquire' || op.kind === 'release' || op.kind === 'kick' || op.kind === 'force-token' || op.kind === 'force') {
      engine.advance();
      check(true);
      events = [];
    }
    const now = clock.now();
    const m = 'pick' in op && models.length > 0 ? (models[op.pick % models.length] as Model) : null;
    // A release, end, kick or token force-release aimed at a claim that is not in the right state (or
    // a release by token of a session's claim) changes nothing.
    const refused =
      m !== null &&
      ((op.kind === 'release' && (m.state !== 'holding' || m.sliding)) ||
        (op.kind === 'end' && m.state === 'ended') ||
        (op.kind === 'kick' && m.state !== 'waiting') ||
        (op.kind === 'force-token' && holder.get(m.key) !== m));
    switch (op.kind) {
      case 'acquire': {
        const free = holder.get(op.key) === null && (queue.get(op.key) as Model[]).length === 0;
        pending.push(op);
        const claim = engine.acquire({
          name: op.key,
          owner: ownerOf(op.owner),
          protocol: op.sliding ? 'session' : 'keyed',
          client: 'c',
          leaseMs: op.leaseMs,
          waitMs: op.waitMs,
          sliding: op.sliding,
        });
        const made = byId.get(claim.id) as Model;
        made.claim = claim;
        expect(made.grants).toBe(free ? 1 : 0);
        break;
      }
      case 'release':
        if (m !== null)
          expect(engine.release(m.key, m.claim?.token ?? 0n)).toBe(m.state === 'holding' && m.sliding ? 'session-claim' : refused ? 'stale' : 'ok');
        break;
      case 'end':
        if (m !== null) engine.end(m.claim as Claim);
        break;
      case 'touch':
        if (m === null) break;
        engine.touch(m.claim as Claim);
        if (m.sliding && m.state !== 'ended' && m.expiresAt > now) m.expiresAt = now + m.leaseMs;
        expect(events).toEqual([]);
        break;
      case 'kick':
        if (m !== null) expect(engine.kick(m.key, m.id)).toBe(!refused);
        break;
      case 'force-token': {
        if (m === null) break;
        const h = holder.get(m.key) ?? null;
        const result = engine.forceRelease(m.key, m.claim?.token ?? 0n);
        if (h === null) expect(result).toEqual({ ok: false, reason: 'not-held', holderToken: null });
        else if (h === m) expect(result).toMatchObject({ ok: true, token: m.claim?.token });
        else expect(result).toEqual({ ok: false, reason: 'stale-token', holderToken: h.claim?.token });
        break;
      }
      case 'force': {
        const h = holder.get(op.key) ?? null;
        expect(engine.forceRelease(op.key).ok).toBe(h !== null);
        break;
      }
      case 'clock':
        clock.advance(op.ms);
        break;
      case 'tick':
        clock.advance(op.ms);
        engine.advance();
        break;
      case 'advance':
        engine.advance();
        break;
    }
    if (refused) expect(events, `${op.kind} of claim ${m?.id} changed something`).toEqual([]);
    check(op.kind === 'tick' || op.kind === 'advance');
  }

  function check(afterAdvance: boolean): void {
    const now = clock.now();
    let held = 0;
    let waiting = 0;
    let locks = 0;
    let earliest = Infinity;
    for (const key of KEYS) {
      const h = holder.get(key) ?? null;
      const q = queue.get(key) as Model[];
      expect(h === null && q.length > 0, `${key} is free while ${q.length} wait`).toBe(false);
      const state = engine.lock(key);
      expect(state?.holder?.id ?? null).toBe(h?.id ?? null);
      expect(state?.queue().map((c) => c.id) ?? []).toEqual(q.map((w) => w.id));
      held += h === null ? 0 : 1;
      waiting += q.length;
      locks += h === null && q.length === 0 ? 0 : 1;
      if (h !== null) earliest = Math.min(earliest, h.expiresAt);
      for (const w of q) earliest = Math.min(earliest, queueDeadline(w));
      if (afterAdvance) expect(earliest, 'a deadline survived advance()').toBeGreaterThan(now);
    }
    expect([engine.heldCount, engine.waiterCount, engine.lockCount]).toEqual([held, waiting, locks]);
    for (const m of models) {
      expect(m.claim?.state).toBe(m.state);
      expect(m.owed, `owner of ${m.id} never told ${m.owed}`).toBeNull();
      expect(m.grants).toBeLessThanOrEqual(1);
    }
    expect(engine.nextDeadline()).toBeLessThanOrEqual(earliest);
    if (earliest === Infinity) expect(engine.nextDeadline()).toBe(Infinity);
    if (afterAdvance) expect(engine.nextDeadline()).toBeGreaterThan(now);
  }

  // Every client goes away: nothing may be left behind.
  for (const m of models) engine.end(m.claim as Claim);
  check(false);
  expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([0, 0, 0]);
  expect(engine.nextDeadline()).toBe(Infinity);
}

it('keeps every lock invariant through random acquires, releases, ends, touches, admin actions and time', () => {
  fc.assert(fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), run), { numRuns: 400 });
  // 400 runs take about 17 s on a loaded 2-core machine, close to the default 20 s.
}, 60_000);
