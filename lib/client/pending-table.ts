// Requests sent on one keyed connection and not yet answered. Replies name only (op, key), and
// the server answers the same (op, key) in send order, so each slot holds a FIFO: the oldest
// request of that slot owns the next reply for it.

export class PendingTable<T> {
  private readonly slots = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(slot: string, entry: T): void {
    const queue = this.slots.get(slot);
    if (queue) queue.push(entry);
    else this.slots.set(slot, [entry]);
    this.count++;
  }

  /** The oldest entry of the slot, left in place; undefined when the slot is empty. */
  oldest(slot: string): T | undefined {
    return this.slots.get(slot)?.[0];
  }

  has(slot: string, entry: T): boolean {
    return this.slots.get(slot)?.includes(entry) === true;
  }

  /** The oldest entry of the slot, removed; undefined for a reply nobody waits for. */
  shift(slot: string): T | undefined {
    const queue = this.slots.get(slot);
    if (!queue) return undefined;
    const entry = queue.shift();
    // Drop empty slots so the map only ever holds keys that are in flight.
    if (queue.length === 0) this.slots.delete(slot);
    if (entry !== undefined) this.count--;
    return entry;
  }

  /**
   * Takes `entry` out of its slot wherever it stands; false when it is not here. Only for a
   * connection about to be dropped: the server still owes that entry a reply, which would
   * otherwise go to the next entry of the slot.
   */
  remove(slot: string, entry: T): boolean {
    const queue = this.slots.get(slot);
    const index = queue ? queue.indexOf(entry) : -1;
    if (!queue || index < 0) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.slots.delete(slot);
    this.count--;
    return true;
  }

  /** Removes and returns everything, each slot's entries still in send order. */
  drain(): T[] {
    const all: T[] = [];
    for (const queue of this.slots.values()) {
      for (const entry of queue) all.push(entry);
    }
    this.slots.clear();
    this.count = 0;
    return all;
  }
}
