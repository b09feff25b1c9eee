// The parked locks (lock-table.ts): idle locks kept for their next claim, in the order they were
// parked, so that the one parked longest ago is pushed out first. A ring of slots rather than a
// list through the locks: a lock keeps only its slot number (in a field it has anyway), not two
// links (issue 29: 16 bytes on every lock, held or not). A lock taken out leaves its slot empty;
// empty slots at either end are dropped at once (a lock taken and given back again and again,
// the common case, reuses the same last slot), and when the ring is full of empty slots between
// parked ones it is compacted, at most once per RING - MAX_PARKED parks (amortized O(1)).

/**
 * Where each parked entry's ring slot is kept (-1 when not parked): a field of a lock object, or
 * a column of compact slots (compact-holders.ts), so the ring holds both kinds in one order.
 */
export interface ParkPlaces<L> {
  placeOf(lock: L): number;
  setPlace(lock: L, slot: number): void;
}

/** What a lock object keeps of the ring: its slot, -1 when not parked. */
export interface Parkable {
  parkSlot: number;
}

/** The places of lock objects: their own parkSlot field. */
export const fieldPlaces: ParkPlaces<Parkable> = {
  placeOf: (lock) => lock.parkSlot,
  setPlace: (lock, slot) => {
    lock.parkSlot = slot;
  },
};

export class ParkedLocks<L> {
  private ring: (L | null)[];
  /** The oldest used slot, and how many slots from it on are in use (parked or emptied). */
  private head = 0;
  private used = 0;
  private parked = 0;
  private readonly mask: number;

  /** `max` locks at most; the ring has twice as many slots, a power of two. */
  constructor(
    readonly max: number,
    private readonly places: ParkPlaces<L>,
  ) {
    let size = 2;
    while (size < 2 * max) size *= 2;
    this.mask = size - 1;
    this.ring = new Array<L | null>(size).fill(null);
  }

  get count(): number {
    return this.parked;
  }

  /** Parks `lock` as the newest; returns the lock pushed out to make room (taken out already), or null. */
  park(lock: L): L | null {
    if (this.used > this.mask) this.compact();
    const slot = (this.head + this.used) & this.mask;
    this.ring[slot] = lock;
    this.places.setPlace(lock, slot);
    this.used++;
    if (++this.parked <= this.max) return null;
    const oldest = this.ring[this.head] as L;
    this.take(oldest);
    return oldest;
  }

  /** Takes a parked `lock` out of the ring. */
  take(lock: L): void {
    this.ring[this.places.placeOf(lock)] = null;
    this.places.setPlace(lock, -1);
    this.parked--;
    const ring = this.ring;
    while (this.used > 0 && ring[(this.head + this.used - 1) & this.mask] === null) this.used--;
    while (this.used > 0 && ring[this.head] === null) {
      this.head = (this.head + 1) & this.mask;
      this.used--;
    }
  }

  /** Forgets every lock (each one's slot is the caller's to clear). */
  clear(): void {
    this.ring.fill(null);
    this.head = 0;
    this.used = 0;
    this.parked = 0;
  }

  /** Moves the parked locks, in order, to the first slots. */
  private compact(): void {
    const old = this.ring;
    const ring = new Array<L | null>(old.length).fill(null);
    let n = 0;
    for (let k = 0; k < this.used; k++) {
      const lock = old[(this.head + k) & this.mask];
      if (lock === null || lock === undefined) continue;
      ring[n] = lock;
      this.places.setPlace(lock, n++);
    }
    this.ring = ring;
    this.head = 0;
    this.used = n;
  }
}
