import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadlineHeap, type HeapItem, parentSlot } from './deadline-heap.ts';

/** A test item remembers the deadline it was last filed under, to check the heap's own column against. */
interface Item extends HeapItem {
  id: number;
  due: number;
}

const item = (id: number, due: number): Item => ({ id, due, heapIndex: -1 });

/** Every item knows its slot: the slots are 0..n-1 and no item is due before its parent. */
function expectHeapShape(model: Item[]): void {
  const bySlot = new Map(model.map((m) => [m.heapIndex, m]));
  expect([...bySlot.keys()].sort((a, b) => a - b)).toEqual(model.map((_, i) => i));
  const misplaced = model.filter((m) => m.heapIndex > 0 && (bySlot.get(parentSlot(m.heapIndex)) as Item).due > m.due);
  expect(misplaced).toEqual([]);
}

/** Pops everything in heap order. */
function drain(heap: DeadlineHeap<Item>): number[] {
  const out: number[] = [];
  for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
    expect(heap.peekDue()).toBe(top.due);
    out.push(heap.dueOf(top));
    heap.remove(top);
  }
  return out;
}

describe('DeadlineHeap', () => {
  it('clear() takes every item out at once, and the heap works as new afterwards', () => {
    const heap = new DeadlineHeap<Item>();
    const items = Array.from({ length: 200 }, (_, i) => item(i, (i * 7919) % 1000));
    for (const i of items) heap.push(i, i.due);
    heap.clear();
    expect(heap.size).toBe(0);
    expect(heap.peek()).toBeUndefined();
    expect(heap.peekDue()).toBe(Number.POSITIVE_INFINITY);
    expect(items.filter((i) => i.heapIndex !== -1 || heap.has(i))).toEqual([]);
    // Filed again, an item cleared out is a new entry, not a stale slot of the old heap.
    const again = [items[5], items[150], items[42]] as Item[];
    for (const i of again) heap.push(i, i.due);
    expect(drain(heap)).toEqual(again.map((i) => i.due).sort((a, b) => a - b));
  });

  it('peeks the earliest deadline and is empty after removing everything', () => {
    const heap = new DeadlineHeap<Item>();
    const items = [item(1, 30), item(2, 10), item(3, 20)];
    for (const i of items) heap.push(i, i.due);
    expect(heap.peek()?.id).toBe(2);
    expect(drain(heap)).toEqual([10, 20, 30]);
    expect(heap.size).toBe(0);
    expect(items.map((i) => i.heapIndex)).toEqual([-1, -1, -1]);
    expect([heap.peekDue(), heap.dueOf(items[0] as Item)]).toEqual([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
  });

  it('ignores removal of an item that is not in the heap', () => {
    const heap = new DeadlineHeap<Item>();
    const inside = item(1, 5);
    heap.push(inside, inside.due);
    heap.remove(item(2, 1));
    heap.remove(inside);
    heap.remove(inside);
    expect(heap.size).toBe(0);
  });

  it('re-files an item moved earlier or later, and pushes one that was not filed', () => {
    const heap = new DeadlineHeap<Item>();
    const a = item(1, 10);
    const b = item(2, 20);
    heap.push(a, a.due);
    heap.push(b, b.due);
    heap.update(a, 30);
    expect(heap.peek()).toBe(b);
    expect(heap.dueOf(a)).toBe(30);
    const c = item(3, 1);
    heap.update(c, c.due);
    expect(heap.peek()).toBe(c);
    expect(heap.has(c)).toBe(true);
  });

  it('matches a sorted array through random pushes, removals and updates', () => {
    const op = fc.oneof(
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('push' as const), due: fc.integer({ min: 0, max: 50 }) }) },
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), due: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ kind: fc.constant('pop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200, size: 'max' }), (ops) => {
        const heap = new DeadlineHeap<Item>();
        const model: Item[] = [];
        let nextId = 1;
        for (const o of ops) {
          if (o.kind === 'push') {
            const it = item(nextId++, o.due);
            heap.push(it, it.due);
            model.push(it);
          } else if (o.kind === 'pop') {
            const top = heap.peek();
            if (top === undefined) {
              expect(model).toEqual([]);
              continue;
            }
            expect(top.due).toBe(Math.min(...model.map((m) => m.due)));
            heap.remove(top);
            model.splice(model.indexOf(top), 1);
          } else if (model.length > 0) {
            const target = model[o.pick % model.length] as Item;
            if (o.kind === 'remove') {
              heap.remove(target);
              model.splice(model.indexOf(target), 1);
              expect(heap.has(target)).toBe(false);
            } else {
              target.due = o.due;
              heap.update(target, o.due);
            }
          }
          expect(heap.size).toBe(model.length);
          expect(model.every((m) => heap.has(m))).toBe(true);
          expectHeapShape(model);
          const min = model.length === 0 ? undefined : Math.min(...model.map((m) => m.due));
          expect(heap.peek()?.due).toBe(min);
          expect(heap.peekDue()).toBe(min ?? Number.POSITIVE_INFINITY);
          expect(model.every((m) => heap.dueOf(m) === m.due)).toBe(true);
        }
        expect(drain(heap)).toEqual(model.map((m) => m.due).sort((x, y) => x - y));
      }),
      { numRuns: 300 },
    );
  });
});
