// The ring of parked locks (parked-locks.ts) against a plain list: whatever order locks are parked
// and taken out in, the count, each lock's slot and which lock is pushed out (the one parked
// longest ago) are what the list says, across compactions of the ring.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fieldPlaces, type Parkable, ParkedLocks } from './parked-locks.ts';

interface Lock extends Parkable {
  id: number;
}

describe('ParkedLocks', () => {
  it('pushes out the lock parked longest ago and keeps every slot right, as a list would', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.oneof(fc.constant({ kind: 'park' as const, pick: 0 }), fc.record({ kind: fc.constant('take' as const), pick: fc.nat() })), {
          maxLength: 600,
        }),
        (max, ops) => {
          const ring = new ParkedLocks<Lock>(max, fieldPlaces);
          const model: Lock[] = [];
          let nextId = 0;
          for (const op of ops) {
            if (op.kind === 'park' || model.length === 0) {
              const lock: Lock = { id: nextId++, parkSlot: -1 };
              const out = ring.park(lock);
              model.push(lock);
              const expected = model.length > max ? (model.shift() as Lock) : null;
              expect(out).toBe(expected);
              if (out !== null) expect(out.parkSlot).toBe(-1);
            } else {
              const [lock] = model.splice(op.pick % model.length, 1) as [Lock];
              ring.take(lock);
              expect(lock.parkSlot).toBe(-1);
            }
            expect(ring.count).toBe(model.length);
            // Every parked lock has its own slot.
            const slots = model.map((l) => l.parkSlot);
            expect(slots.every((s) => s >= 0)).toBe(true);
            expect(new Set(slots).size).toBe(slots.length);
          }
          // Parking max more pushes the survivors out oldest first.
          const survivors = [...model];
          const pushed: Lock[] = [];
          for (let i = 0; i < max; i++) {
            const out = ring.park({ id: nextId++, parkSlot: -1 });
            if (out !== null) pushed.push(out);
          }
          expect(pushed).toEqual(survivors);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('compacts a ring full of emptied slots, and every lock is still found at its slot after', () => {
    const ring = new ParkedLocks<Lock>(4, fieldPlaces); // 8 slots
    const oldest: Lock = { id: 0, parkSlot: -1 };
    ring.park(oldest);
    let newest: Lock = { id: 1, parkSlot: -1 };
    ring.park(newest);
    // Each round leaves an emptied slot between the oldest and the newest: 20 rounds fill 8 slots twice over.
    for (let id = 2; id < 22; id++) {
      const next = { id, parkSlot: -1 };
      ring.park(next);
      ring.take(newest);
      newest = next;
    }
    expect(ring.count).toBe(2);
    // Taken out from its slot after the compactions, the newest is gone: four more push out only the oldest.
    ring.take(newest);
    const pushed = [];
    for (let id = 100; id < 105; id++) pushed.push(ring.park({ id, parkSlot: -1 })?.id ?? null);
    expect(pushed).toEqual([null, null, null, 0, 100]);
  });

  it('reuses one slot for a lock parked and taken out again and again (no compaction needed)', () => {
    const ring = new ParkedLocks<Lock>(4, fieldPlaces);
    const held = [0, 1, 2].map((id) => ({ id, parkSlot: -1 }));
    for (const l of held) ring.park(l);
    const busy: Lock = { id: 9, parkSlot: -1 };
    const slots = new Set<number>();
    for (let i = 0; i < 1_000; i++) {
      ring.park(busy);
      slots.add(busy.parkSlot);
      ring.take(busy);
    }
    expect([...slots]).toEqual([3]);
    expect(held.map((l) => l.parkSlot)).toEqual([0, 1, 2]);
  });
});
