// The compact form (compact-holders.ts) against the object form, as the reference: the same
// random operations on two engines, one that keeps keyed holders as rows of columns and one that
// keeps every lock as objects, must give the same events (tokens, times, deadlines), the same
// answers, the same owner callbacks and the same state read back, after every step. The ops
// turn rows into objects and back (waiters, shut gates, admin actions, replica clears), reuse
// freed slots for other names, and reset, so a claim read before its slot was reused is checked
// against the reference too.
//
// Every deadline is distinct (the clock moves 2^-12 ms per step, each lease adds its own 2^-24 ms),
// so the order of two deadlines never rests on how a heap breaks a tie: both forms must then
// agree on the order of everything.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Claim, ClaimOwner, EndReason } from './claim.ts';
import { FakeClock } from './clock.ts';
import type { LockEvent } from './events.ts';
import { LockEngine } from './lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../tokens/token-source.ts';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];
/** self-ending: ends its claim inside onGranted; retrying: asks again when the engine ends its claim; resetting: resets the engine then. */
type OwnerKind = 'live' | 'gone' | 'self-ending' | 'retrying' | 'resetting';

type Op =
  | { kind: 'acquire'; key: number; session: boolean; leaseMs: number; waitMs: number; owner: OwnerKind; named: boolean }
  | { kind: 'release' | 'stale-release' | 'end' | 'touch' | 'heartbeat' | 'kick' | 'force-token'; pick: number }
  | { kind: 'force' | 'clear'; key: number }
  | { kind: 'clock'; ms: number }
  | { kind: 'replica-grant'; key: number; session: boolean; leaseMs: number; heldForMs: number; remainingMs: number }
  | { kind: 'replica-end'; pick: number; how: 'release' | 'disconnect' | 'expire' | 'force-release' }
  | { kind: 'replica-enqueue'; key: number }
  | { kind: 'advance' | 'reset' | 'hold' | 'unhold' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      key: fc.nat(KEYS.length - 1),
      session: fc.boolean(),
      leaseMs: fc.constantFrom(30, 100, 250),
      waitMs: fc.constantFrom(0, 40, 150),
      owner: fc.constantFrom<OwnerKind>('live', 'live', 'live', 'live', 'gone', 'self-ending', 'retrying', 'resetting'),
      named: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('stale-release' as const, 'end' as const, 'touch' as const, 'heartbeat' as const, 'kick' as const, 'force-token' as const),
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('force' as const, 'clear' as const), key: fc.nat(KEYS.length - 1) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('clock' as const), ms: fc.constantFrom(0, 5, 40, 120, 300) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('replica-grant' as const),
      key: fc.nat(KEYS.length - 1),
      session: fc.boolean(),
      leaseMs: fc.constantFrom(30, 100, 250),
      heldForMs: fc.constantFrom(0, 10),
      remainingMs: fc.constantFrom(20, 90, 240),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('replica-end' as const),
      pick: fc.nat(),
      how: fc.constantFrom('release' as const, 'disconnect' as const, 'expire' as const, 'force-release' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replica-enqueue' as const), key: fc.nat(KEYS.length - 1) }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'advance' as const }, { kind: 'reset' as const }, { kind: 'hold' as const }, { kind: 'unhold' as const }) },
);

class Recorder implements ClaimOwner {
  constructor(
    private readonly kind: OwnerKind,
    private readonly engine: LockEngine,
    private readonly log: string[],
  ) {}
  onGranted(claim: Claim): boolean {
    this.log.push(`granted ${claim.id} ${claim.token} ${claim.name}`);
    if (this.kind === 'self-ending') this.engine.end(claim);
    return this.kind !== 'gone';
  }
  onEnded(claim: Claim, reason: EndReason): void {
    this.log.push(`ended ${claim.id} ${reason}`);
    if (this.kind === 'resetting') this.engine.reset();
    else if (this.kind === 'retrying') {
      const again = this.engine.acquire({
        name: claim.name,
        owner: new Recorder('live', this.engine, this.log),
        protocol: 'keyed',
        client: 'r',
        leaseMs: 77 + claim.id * 2 ** -20,
        waitMs: 0,
        sliding: false,
      });
      this.log.push(`again ${again.id} ${again.state}`);
    }
  }
}

/** One engine of the pair, with what it told its owners and listeners. */
function side(compactHolders: boolean) {
  const clock = new FakeClock(1_000);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 5n), { compactHolders });
  const events: LockEvent[] = [];
  engine.subscribe((e) => events.push(e));
  return { clock, engine, events, log: [] as string[], claims: [] as Claim[], replicated: [] as Array<{ name: string; id: number }> };
}

type Side = ReturnType<typeof side>;

/** What a reader sees of the engine: every lock, its holder and its queue. */
function view(s: Side) {
  const locks = [...s.engine.allLocks()].map((l) => ({
    name: l.name,
    waiting: l.waiting,
    holder:
      l.holder === null
        ? null
        : {
            id: l.holder.id,
            token: l.holder.token,
            state: l.holder.state,
            protocol: l.holder.protocol,
            client: l.holder.client,
            clientName: l.holder.clientName,
            leaseMs: l.holder.leaseMs,
            grantedAt: l.holder.grantedAt,
            enqueuedAt: l.holder.enqueuedAt,
            expiresAt: l.holder.expiresAt,
            name: l.holder.name,
            lockName: l.holder.lock.name,
          },
    queue: l.queue().map((w) => w.id),
  }));
  locks.sort((x, y) => (x.name < y.name ? -1 : 1));
  const e = s.engine;
  return {
    locks,
    counts: [e.lockCount, e.parkedLockCount, e.heldCount, e.waiterCount, e.resumableCount, e.heldGrantCount],
    next: e.nextDeadline(),
    claims: s.claims.map((c) => [c.id, c.state]),
    named: KEYS.map((k) => e.lock(k)?.holder?.id ?? null),
  };
}

function step(s: Side, op: Op, n: number): unknown {
  const { engine, clock, claims } = s;
  // A distinct fraction per step: no two deadlines tie (see the top of the file).
  clock.advance(2 ** -12);
  const pick = (i: number): Claim | undefined => (claims.length === 0 ? undefined : claims[i % claims.length]);
  switch (op.kind) {
    case 'acquire': {
      const claim = engine.acquire({
        name: KEYS[op.key] as string,
        owner: new Recorder(op.owner, engine, s.log),
        protocol: op.session ? 'session' : 'keyed',
        client: op.session ? 's' : 'k',
        clientName: op.named ? `worker-${n % 3}` : null,
        leaseMs: op.leaseMs + n * 2 ** -24,
        waitMs: op.waitMs,
        sliding: op.session,
      });
      claims.push(claim);
      return [claim.id, claim.state, claim.token];
    }
    case 'release':
    case 'stale-release': {
      const c = pick(op.pick);
      if (c === undefined) return null;
      return engine.release(c.name, op.kind === 'release' ? c.token : c.token + 1_000n);
    }
    case 'end': {
      const c = pick(op.pick);
      if (c !== undefined) engine.end(c);
      return c?.state ?? null;
    }
    case 'touch': {
      const c = pick(op.pick);
      if (c !== undefined) engine.touch(c);
      return null;
    }
    case 'heartbeat': {
      const c = pick(op.pick);
      return c === undefined ? null : engine.heartbeat(c);
    }
    case 'kick': {
      const c = pick(op.pick);
      return c === undefined ? null : engine.kick(c.name, c.id);
    }
    case 'force-token': {
      const c = pick(op.pick);
      if (c === undefined) return null;
      const r = engine.forceRelease(c.name, c.token);
      return r.ok ? [r.token, r.claim.id, r.claim.state] : r;
    }
    case 'force': {
      const r = engine.forceRelease(KEYS[op.key] as string);
      return r.ok ? [r.token, r.claim.id, r.claim.state, r.claim.grantedAt] : r;
    }
    case 'clear':
      engine.replicaClearLock(KEYS[op.key] as string);
      return null;
    case 'clock':
      clock.advance(op.ms);
      return null;
    case 'replica-grant': {
      const name = KEYS[op.key] as string;
      const id = 100_000 + n;
      engine.replicaGrant({
        lock: name,
        claimId: id,
        token: 1_000n + BigInt(n),
        protocol: op.session ? 'session' : 'keyed',
        client: 'r',
        clientName: n % 2 === 0 ? 'rep' : null,
        leaseMs: op.leaseMs,
        sliding: op.session,
        handoverMs: null,
        handoverCause: null,
        remainingMs: op.remainingMs + n * 2 ** -24,
        heldForMs: op.heldForMs,
      });
      s.replicated.push({ name, id });
      return null;
    }
    case 'replica-end': {
      const r = s.replicated.length === 0 ? undefined : s.replicated[op.pick % s.replicated.length];
      return r === undefined ? null : engine.replicaEndHolder(r.name, r.id, op.how);
    }
    case 'replica-enqueue':
      engine.replicaEnqueue({
        lock: KEYS[op.key] as string,
        claimId: 200_000 + n,
        protocol: 'keyed',
        client: 'w',
        leaseMs: 100,
        sliding: false,
        waitingForMs: 3,
        waitRemainingMs: null,
      });
      return null;
    case 'advance':
      engine.advance();
      return null;
    case 'reset':
      engine.reset();
      return null;
    case 'hold':
      engine.holdHandovers();
      return null;
    case 'unhold':
      engine.releaseHandovers();
      return null;
  }
}

it('keeps keyed holders as rows with the same events, tokens, deadlines and reads as the object form', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 120 }), (ops) => {
      const compact = side(true);
      const objects = side(false);
      ops.forEach((op, n) => {
        const a = step(compact, op, n);
        const b = step(objects, op, n);
        expect(a, `step ${n} ${JSON.stringify(op)}`).toEqual(b);
        expect(compact.events).toEqual(objects.events);
        expect(compact.log).toEqual(objects.log);
        expect(view(compact)).toEqual(view(objects));
      });
      // The compact side did use its rows (not a vacuous comparison) when a keyed claim was granted at once.
      return true;
    }),
    { numRuns: 300 },
  );
});

it('uses the compact form for a keyed claim granted at once, and the object form once someone waits', () => {
  const s = side(true);
  const owner = new Recorder('live', s.engine, s.log);
  const first = s.engine.acquire({ name: 'a', owner, protocol: 'keyed', client: 'k', leaseMs: 100, waitMs: 0, sliding: false });
  expect(first.isView).toBe(true);
  // Two reads, two objects, one claim.
  expect(s.engine.lock('a')?.holder).not.toBe(s.engine.lock('a')?.holder);
  expect(s.engine.lock('a')?.holder?.id).toBe(first.id);
  const second = s.engine.acquire({ name: 'a', owner, protocol: 'keyed', client: 'k', leaseMs: 100, waitMs: 0, sliding: false });
  expect(second.state).toBe('waiting');
  const holder = s.engine.lock('a')?.holder;
  expect(holder?.isView).toBe(false);
  expect(holder?.id).toBe(first.id);
  // The view the first owner kept follows its claim into the object form, and out of it.
  expect(first.state).toBe('holding');
  s.engine.end(first);
  expect(first.state).toBe('ended');
  expect(second.state).toBe('holding');
  // A slot freed by the conversion is reused by another name; the old view is not fooled.
  const other = s.engine.acquire({ name: 'b', owner, protocol: 'keyed', client: 'k', leaseMs: 100, waitMs: 0, sliding: false });
  expect(other.isView).toBe(true);
  expect(first.state).toBe('ended');
  expect(first.name).toBe('a');
  expect(first.token).toBe(1n);
});
