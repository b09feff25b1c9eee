// The lock table: the state every part of the engine shares (lock-engine.ts lists the parts).
// The locks by name, parked idle ones among them; the held and queued counts; the deadline heap;
// the listeners; the resumable claims by id and their renewals; the detach limits and counts.
// Its methods are the changes more than one part makes (file a lock, park it, end a holder, take
// a waiter out of its queue), so that each keeps the counts and the heap right in one place. Only
// the engine's parts see it: the rest of the tree reads it through LockEngine.
import { Claim, type HandoverCause, LockState } from './claim.ts';
import { CompactHolders, type TableEntry } from './compact-holders.ts';
import { DeadlineHeap } from './deadline-heap.ts';
import { LockMap } from './lock-map.ts';
import { PAGE_MASK } from './paged-columns.ts';
import { ParkedLocks } from './parked-locks.ts';
import type { LockEvent, LockEventListener } from './events.ts';

export const NEVER = Number.POSITIVE_INFINITY;

/**
 * Idle locks kept in the table, oldest pushed out first. A lock taken and given back again and
 * again (the common case: a worker's lock on its own job) then makes no LockState and no change to
 * the table per claim, and its name is the same string object every time, so what keys on it
 * (the console's grant log) finds it by identity. Issue 14: the table's insert and delete per
 * uncontended pair, and the readers' lookups of a new string, were a few percent of a request.
 */
export const MAX_PARKED = 4_096;

/**
 * How long and how many resumable session claims may wait between connections for their
 * clients (RESUME). A claim on a connection is bounded by that connection (and the connection
 * limit); one between connections stands for nobody, so its lease, which a client may set to
 * centuries, is no bound: 10,000 resets could otherwise leave 10,000 locks held for good.
 */
export interface DetachLimits {
  /** Longest a claim waits for its client from when it lost its connection, whatever its lease (ms). */
  readonly maxMs: number;
  /** Claims that may wait at once on this node; past it a claim that loses its connection ends as a close ends it. */
  readonly maxClaims: number;
}

/** `baton serve`'s defaults (--max-park 60s, --max-parked 16384: one full --max-connections of sessions fits a failover). */
export const DEFAULT_DETACH_LIMITS: DetachLimits = Object.freeze({ maxMs: 60_000, maxClaims: 16_384 });

export class LockTable {
  /**
   * Every lock with a holder or waiters, and up to MAX_PARKED idle ones (parked: `lock.parked`):
   * a LockState, or the slot of a compact one (compact-holders.ts: a keyed holder, nobody waiting).
   */
  readonly locks = new LockMap<TableEntry>();
  /** The compact locks' columns and their deadlines. */
  readonly compact = new CompactHolders(this.locks);
  /**
   * The locks of `locks` in the object form. Only they can have a queue (a compact lock has one
   * holder and nobody waiting), so a walk for free locks with a queue (a promotion's
   * fileFreeQueues) reads these, not the millions of compact rows: 140 ms of one turn at 5 M.
   */
  readonly objectLocks = new Set<LockState>();
  /** Whether a keyed grant may take the compact form (off only to test the object form against it). */
  compactOn = true;
  /** The parked locks of both forms, oldest first. */
  private readonly parkedLocks = new ParkedLocks<TableEntry>(MAX_PARKED, {
    placeOf: (e) => (typeof e === 'number' ? (this.compact.page(e).parkPos[e & PAGE_MASK] as number) : e.parkSlot),
    setPlace: (e, at) => {
      if (typeof e === 'number') this.compact.page(e).parkPos[e & PAGE_MASK] = at;
      else e.parkSlot = at;
    },
  });
  /** The object-form claims' deadlines (the compact ones are in compact.deadlines). */
  readonly heap = new DeadlineHeap<Claim>();
  readonly listeners: LockEventListener[] = [];
  /** Claim ids are never reused, not even across a promotion (see ReplicaOps). */
  nextClaimId = 1;
  held = 0;
  queued = 0;
  /**
   * Claims that may outlive their connection (sessions that sent a claim key), by claim id: a
   * standby renews them from the active's coalesced renewals, a promotion keeps them.
   */
  readonly resumable = new Map<number, Claim>();
  /** Resumable claims renewed (or granted) since the last takeRenewals(), while tracked. */
  renewals: Claim[] = [];
  trackingRenewals = false;
  detachLimits: DetachLimits = DEFAULT_DETACH_LIMITS;
  /** Live claims whose owner awaits their client's RESUME (owner.awaitingResume): at most detachLimits.maxClaims. */
  detachedNow = 0;
  /** Claims not kept between connections because detachLimits.maxClaims were waiting already. */
  detachRefusals = 0;

  /** Subscribes to every state change; returns the unsubscribe function. */
  subscribe(listener: LockEventListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** The engine clock time at which `advance()` has work next; +Infinity when none. */
  nextDeadline(): number {
    const a = this.heap.peekDue();
    const b = this.compact.deadlines.peekDue();
    return a < b ? a : b;
  }

  /** Locks with a holder or waiters. */
  get lockCount(): number {
    return this.locks.size - this.parkedLocks.count;
  }

  /** Idle locks kept for their next claim (at most MAX_PARKED): memory, not state. */
  get parkedLockCount(): number {
    return this.parkedLocks.count;
  }

  get heldCount(): number {
    return this.held;
  }

  get waiterCount(): number {
    return this.queued;
  }

  /** The lock's state (holder and queue), or undefined when nobody holds or waits for it. */
  lock(name: string): LockState | undefined {
    const lock = this.locks.get(name);
    if (typeof lock === 'number') return this.compact.parkPosOf(lock) >= 0 ? undefined : this.compact.lockView(lock);
    return lock === undefined || lock.parked ? undefined : lock;
  }

  /** Resumable claims (holders and waiters that sent a claim key), live ones only. */
  get resumableCount(): number {
    return this.resumable.size;
  }

  /** Sets how long and how many claims may wait between connections (claims already waiting keep their deadline). */
  limitDetached(limits: DetachLimits): void {
    if (!(limits.maxMs > 0 && limits.maxMs < NEVER) || !(Number.isInteger(limits.maxClaims) && limits.maxClaims >= 0)) {
      throw new RangeError(`bad detach limits ${limits.maxMs} ms, ${limits.maxClaims} claims`);
    }
    this.detachLimits = { maxMs: limits.maxMs, maxClaims: limits.maxClaims };
  }

  get detachLimit(): DetachLimits {
    return this.detachLimits;
  }

  /** Claims between connections waiting for their clients ("reconnecting"). */
  get detachedCount(): number {
    return this.detachedNow;
  }

  /** Claims that lost their connection and were ended rather than kept, the node being full. */
  get detachRefusedCount(): number {
    return this.detachRefusals;
  }

  /** Every live resumable claim. */
  resumableClaims(): IterableIterator<Claim> {
    return this.resumable.values();
  }

  /** The resumable claim with this id, or undefined. */
  resumableClaim(claimId: number): Claim | undefined {
    return this.resumable.get(claimId);
  }

  /**
   * Collects resumable claims as they are renewed (replication to standbys wants them), or stops
   * and forgets the list. Off by default, so a node that replicates to nobody keeps no list.
   */
  trackRenewals(on: boolean): void {
    this.trackingRenewals = on;
    if (!on) this.takeRenewals();
  }

  /** The resumable claims renewed or granted since the last call, each once (ended ones included: skip them). */
  takeRenewals(): Claim[] {
    const out = this.renewals;
    this.renewals = [];
    for (const claim of out) claim.renewQueued = false;
    return out;
  }

  /** Every lock that has a holder or waiters (live: a lock filed while iterating may be seen). */
  *allLocks(): IterableIterator<LockState> {
    for (const lock of this.locks.values()) {
      if (typeof lock === 'number') {
        if (this.compact.parkPosOf(lock) < 0) yield this.compact.lockView(lock);
      } else if (!lock.parked) yield lock;
    }
  }

  /** The lock object of `name` if it holds or waits (a compact one turned into objects), else undefined. */
  objectLock(name: string): LockState | undefined {
    const lock = this.locks.get(name);
    if (typeof lock !== 'number') return lock;
    return this.compact.idOf(lock) === 0 ? undefined : this.objectForm(lock);
  }

  /**
   * Turns compact slot `slot` into a LockState (with its holder as a Claim, filed in the object
   * heap under the same deadline) filed under its name; a parked slot becomes an idle lock that
   * is not parked (the caller gives it a claim). The slot is free afterwards.
   */
  objectForm(slot: number): LockState {
    const c = this.compact;
    const name = c.nameOf(slot) as string;
    const lock = new LockState(name);
    lock.filed = true;
    if (c.parkPosOf(slot) >= 0) this.parkedLocks.take(slot);
    const id = c.idOf(slot);
    if (id !== 0) {
      const at = c.grantedAtOf(slot);
      const leaseMs = c.leaseMsOf(slot);
      const claim = new Claim(id, lock, c.ownerOf(slot), 'keyed', c.clientOf(slot), leaseMs, false, at, 0);
      claim.token = c.tokenOf(slot);
      claim.clientName = c.clientNameOf(slot);
      claim.state = 'holding';
      claim.grantedAt = at;
      claim.expiresAt = c.expiresAt(slot);
      lock.holder = claim;
      this.heap.push(claim, claim.expiresAt);
    }
    c.release(slot);
    this.locks.set(name, lock);
    this.objectLocks.add(lock);
    return lock;
  }

  /** A new compact slot filed under `name` (not held yet); the caller has looked and found none. */
  addCompact(name: string): number {
    const slot = this.compact.alloc(name);
    this.locks.set(name, slot);
    return slot;
  }

  /**
   * A compact slot's holder is gone: it is parked, as an idle lock object would be, unless the
   * event listeners or the owner called back took it again, turned it into objects or reset all.
   */
  parkCompactIfIdle(slot: number): void {
    if (!this.compact.idleUnparked(slot)) return;
    const pushedOut = this.parkedLocks.park(slot);
    if (pushedOut !== null) this.unfileEntry(pushedOut);
  }

  /** A parked compact slot gets a claim again. */
  unparkCompact(slot: number): void {
    this.parkedLocks.take(slot);
  }

  private unfileEntry(entry: TableEntry): void {
    if (typeof entry === 'number') this.unfileCompact(entry);
    else this.unfile(entry);
  }

  /** Takes compact slot `slot` out of the table, silently (its holder, if any, ends with no event: see ReplicaOps.replicaClearLock). */
  unfileCompact(slot: number): void {
    const c = this.compact;
    if (c.parkPosOf(slot) >= 0) this.parkedLocks.take(slot);
    else if (c.idOf(slot) !== 0) this.held--;
    this.locks.delete(c.nameOf(slot) as string);
    c.release(slot);
  }

  // --- the changes more than one part makes ---

  /** The lock to file a claim under: the one in the table (taken out of the parked ones) or a new one. */
  lockNamed(name: string): LockState {
    const entry = this.locks.get(name);
    if (entry === undefined) return this.addLock(name);
    const lock = typeof entry === 'number' ? this.objectForm(entry) : entry;
    if (lock.parked) this.unpark(lock);
    return lock;
  }

  /** Files a new lock under `name`; the caller has looked and found none. */
  addLock(name: string): LockState {
    const lock = new LockState(name);
    lock.filed = true;
    this.locks.set(name, lock);
    this.objectLocks.add(lock);
    return lock;
  }

  /** A lock nobody holds or waits for any more is parked: kept for its next claim, the oldest pushed out past MAX_PARKED. */
  dropIfIdle(lock: LockState): void {
    if (!lock.idle || !lock.filed || lock.parked) return;
    const pushedOut = this.parkedLocks.park(lock);
    if (pushedOut !== null) this.unfileEntry(pushedOut);
  }

  /** A parked lock gets a claim again: it starts as a new lock would (no queue, so no last end). */
  unpark(lock: LockState): void {
    this.parkedLocks.take(lock);
  }

  /** Takes `lock` out of the table (parked or not): it is no longer the lock of its name. */
  unfile(lock: LockState): void {
    if (!lock.filed) return;
    if (lock.parked) this.unpark(lock);
    lock.filed = false;
    this.locks.delete(lock.name);
    this.objectLocks.delete(lock);
  }

  /**
   * Empties the table (reset): every lock in it stops being the lock of its name. `expected`: how
   * many locks are coming (a standby's snapshot), so that the map is split for them (lock-map.ts).
   */
  unfileAll(expected = 0): void {
    for (const lock of this.locks.values()) {
      if (typeof lock === 'number') continue;
      lock.filed = false;
      lock.parkSlot = -1;
    }
    this.locks.clear(expected);
    this.objectLocks.clear();
    this.parkedLocks.clear();
    // The compact columns need no size told in advance: they grow a page at a time (paged-columns.ts).
    this.compact.clear();
  }

  /** Files a claim that sent a claim key (it must have its keyHash already). */
  addResumable(claim: Claim): void {
    this.resumable.set(claim.id, claim);
  }

  /** A resumable claim's lease moved on: the standbys hear of it at the next renewals batch. */
  noteRenewal(claim: Claim): void {
    if (this.trackingRenewals && !claim.renewQueued) {
      claim.renewQueued = true;
      this.renewals.push(claim);
    }
  }

  /**
   * Room for one more claim between connections. False counts a refusal: the caller ends the
   * claim (or leaves it to be ended) instead of keeping it.
   */
  roomToDetach(): boolean {
    if (this.detachedNow < this.detachLimits.maxClaims) return true;
    this.detachRefusals++;
    return false;
  }

  /** A claim now waits for its client: counted, and kept at most detachLimits.maxMs from `now`. */
  fileDetached(claim: Claim, now: number): void {
    this.detachedNow++;
    const until = now + this.detachLimits.maxMs;
    if (!(claim.expiresAt > until)) return;
    claim.expiresAt = until;
    if (this.heap.has(claim) && this.heap.dueOf(claim) > until) this.heap.update(claim, until);
    // The standbys learn the shorter lease with the next renewals, and keep no more of it at a crash.
    this.noteRenewal(claim);
  }

  endHolder(lock: LockState, holder: Claim, endedAt: number, cause: HandoverCause): void {
    if (holder.keyHash !== null) this.resumable.delete(holder.id);
    if (holder.owner.awaitingResume === true) this.detachedNow--;
    holder.state = 'ended';
    this.heap.remove(holder);
    lock.holder = null;
    lock.noteEnd(endedAt, cause);
    this.held--;
  }

  /** Takes a waiter out of its queue (and the heap); deletes the lock when nothing is left. */
  leaveQueue(claim: Claim, dropIdleLock = true): void {
    const lock = claim.lock;
    if (claim.keyHash !== null) this.resumable.delete(claim.id);
    // A waiter granted from the queue leaves it here and is counted again by the grant.
    if (claim.owner.awaitingResume === true) this.detachedNow--;
    lock.unlink(claim);
    this.queued--;
    this.heap.remove(claim);
    claim.state = 'ended';
    if (dropIdleLock) this.dropIfIdle(lock);
  }

  emit(event: LockEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
