// The compact holders' deadlines (slot-deadlines.ts: a FIFO lane per lease length, a heap for the
// rest) come out in time order: against a plain map of slot to deadline, through random filings
// of mixed lease lengths (more lengths than there are lanes, so lanes empty and change hands),
// deadlines out of their lane's order (a standby's grant filed with the end its active reported,
// a clock that stepped back), renewals (taken out and filed again later), releases and expiries.
// Then the engine: every expiry fires once its deadline has come and in deadline order, compact
// holders of mixed lease lengths, standby grants and renewed session claims alike.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { Claim, ClaimOwner } from './claim.ts';
import { FakeClock } from './clock.ts';
import { LockEngine } from './lock-engine.ts';
import { PAGE_ROWS } from './paged-columns.ts';
import { MAX_LANES, SlotDeadlines } from './slot-deadlines.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../tokens/token-source.ts';

/** Slots in the first page and on both sides of the first page boundary (the columns are paged, paged-columns.ts). */
const SLOT_IDS = [...Array.from({ length: 20 }, (_, i) => i), ...Array.from({ length: 20 }, (_, i) => PAGE_ROWS - 10 + i)];
const slotArb = fc.constantFrom(...SLOT_IDS);
/** A few common lease lengths, and a range of rare ones wider than MAX_LANES. */
const leaseArb = fc.oneof(fc.constantFrom(30, 100, 250), fc.integer({ min: 1, max: 3 * MAX_LANES }));

type Op =
  | { kind: 'file'; slot: number; leaseMs: number; stretch: number }
  | { kind: 'release' | 'renew'; slot: number; leaseMs: number }
  | { kind: 'clock'; ms: number }
  | { kind: 'expire' }
  | { kind: 'clear' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  // stretch: 1 mostly (due = now + lease); else a deadline earlier or later than that, never past.
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('file' as const), slot: slotArb, leaseMs: leaseArb, stretch: fc.constantFrom(1, 1, 1, 0.25, 0.9, 1.5) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('release' as const, 'renew' as const), slot: slotArb, leaseMs: leaseArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('clock' as const), ms: fc.constantFrom(0, 1, 10, 60, 200) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

/** The earliest deadline of the model, and every slot filed under it. */
function earliest(model: Map<number, number>): { due: number; slots: number[] } {
  let due = Number.POSITIVE_INFINITY;
  for (const d of model.values()) if (d < due) due = d;
  return { due, slots: [...model].filter(([, d]) => d === due).map(([s]) => s) };
}

it('gives the earliest deadline first through mixed lease lengths, renewals, releases and clears', () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 200, size: 'max' }), (ops) => {
      const deadlines = new SlotDeadlines();
      const model = new Map<number, number>();
      let now = 1_000;
      let lastOut = Number.NEGATIVE_INFINITY;
      for (const op of ops) {
        switch (op.kind) {
          case 'file':
            if (model.has(op.slot)) break;
            deadlines.push(op.slot, now + op.leaseMs * op.stretch, op.leaseMs);
            model.set(op.slot, now + op.leaseMs * op.stretch);
            break;
          case 'release':
            deadlines.remove(op.slot);
            model.delete(op.slot);
            break;
          case 'renew':
            // A renewal files the slot again under a later deadline.
            if (!model.has(op.slot)) break;
            deadlines.remove(op.slot);
            deadlines.push(op.slot, now + op.leaseMs, op.leaseMs);
            model.set(op.slot, now + op.leaseMs);
            break;
          case 'clock':
            now += op.ms;
            break;
          case 'expire':
            // As the engine's advance(): every deadline that has come, earliest first.
            while (deadlines.peekDue() <= now) {
              const slot = deadlines.peek();
              const first = earliest(model);
              expect(deadlines.peekDue()).toBe(first.due);
              expect(first.slots).toContain(slot);
              expect(first.due).toBeGreaterThanOrEqual(lastOut);
              lastOut = first.due;
              deadlines.remove(slot);
              model.delete(slot);
            }
            break;
          case 'clear':
            deadlines.clear();
            model.clear();
            lastOut = Number.NEGATIVE_INFINITY;
            break;
        }
        const first = earliest(model);
        expect(deadlines.peekDue()).toBe(first.due);
        expect(deadlines.size).toBe(model.size);
        if (model.size > 0) expect(first.slots).toContain(deadlines.peek());
        else expect(deadlines.peek()).toBe(-1);
        for (const slot of SLOT_IDS) {
          // One expect per slot and step is most of the run's time: compare, then expect on a difference.
          if (deadlines.has(slot) !== model.has(slot) || deadlines.dueOf(slot) !== (model.get(slot) ?? Number.POSITIVE_INFINITY)) {
            expect({ slot, filed: deadlines.has(slot), due: deadlines.dueOf(slot) }).toEqual({ slot, filed: model.has(slot), due: model.get(slot) });
          }
        }
      }
    }),
    { numRuns: 200 },
  );
});

type EngineOp =
  | { kind: 'acquire'; key: number; leaseMs: number; session: boolean }
  | { kind: 'replica-grant'; key: number; leaseMs: number; remainingMs: number }
  | { kind: 'release' | 'touch'; pick: number }
  | { kind: 'clock'; ms: number }
  | { kind: 'advance' };

const engineOpArb: fc.Arbitrary<EngineOp> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('acquire' as const), key: fc.nat(59), leaseMs: leaseArb, session: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('replica-grant' as const), key: fc.nat(59), leaseMs: leaseArb, remainingMs: fc.integer({ min: 1, max: 300 }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('release' as const, 'touch' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('clock' as const), ms: fc.constantFrom(0, 1, 10, 60, 200) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'advance' as const }) },
);

it('fires every lease expiry once its deadline has come, in deadline order', () => {
  const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
  fc.assert(
    fc.property(fc.array(engineOpArb, { maxLength: 200, size: 'max' }), (ops) => {
      const clock = new FakeClock(1_000);
      const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(), 5n));
      /** Each live holder's lease end as it was granted or last renewed, by claim id. */
      const ends = new Map<number, number>();
      const claims: Claim[] = [];
      const expired: number[] = [];
      engine.subscribe((e) => {
        if (e.type === 'release') ends.delete(e.claimId);
        if (e.type !== 'expire') return;
        const end = ends.get(e.claimId);
        expect(end).toBeDefined();
        expect(end).toBeLessThanOrEqual(clock.now());
        expect(e.lastAliveAt).toBeLessThanOrEqual(clock.now());
        expired.push(end as number);
        ends.delete(e.claimId);
      });
      let n = 0;
      for (const op of ops) {
        n++;
        switch (op.kind) {
          case 'acquire': {
            // Free locks only: no waiters, so every holder is one this test granted.
            if (engine.lock(`k${op.key}`) !== undefined) break;
            const c = engine.acquire({
              name: `k${op.key}`,
              owner,
              protocol: op.session ? 'session' : 'keyed',
              client: 'c',
              leaseMs: op.leaseMs,
              waitMs: 0,
              sliding: op.session,
            });
            if (c.state === 'holding') {
              ends.set(c.id, c.expiresAt);
              claims.push(c);
            }
            break;
          }
          case 'replica-grant': {
            // A standby's grant, filed under the end its active reported: out of its lane's order.
            const name = `k${op.key}`;
            if (engine.lock(name) !== undefined) break;
            const id = 1_000_000 + n;
            engine.replicaGrant({
              lock: name,
              claimId: id,
              token: BigInt(id),
              protocol: 'keyed',
              client: 'r',
              leaseMs: op.leaseMs,
              sliding: false,
              handoverMs: null,
              handoverCause: null,
              remainingMs: op.remainingMs,
              heldForMs: 0,
            });
            ends.set(id, clock.now() + op.remainingMs);
            break;
          }
          case 'release': {
            const c = claims[op.pick % Math.max(1, claims.length)];
            if (c !== undefined && c.protocol === 'keyed') engine.release(c.name, c.token);
            else if (c !== undefined) {
              engine.end(c);
              ends.delete(c.id);
            }
            break;
          }
          case 'touch': {
            // A session's sign of life renews its sliding lease.
            const c = claims[op.pick % Math.max(1, claims.length)];
            if (c === undefined || !c.sliding || !ends.has(c.id)) break;
            engine.touch(c);
            if (c.state === 'holding') ends.set(c.id, c.expiresAt);
            break;
          }
          case 'clock':
            clock.advance(op.ms);
            break;
          case 'advance':
            engine.advance();
            break;
        }
      }
      clock.advance(10_000);
      engine.advance();
      expect(ends.size).toBe(0);
      for (let i = 1; i < expired.length; i++) expect(expired[i]).toBeGreaterThanOrEqual(expired[i - 1] as number);
    }),
    { numRuns: 200 },
  );
});
