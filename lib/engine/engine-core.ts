// The lock engine's state and what every way of changing it shares. Two drivers change it:
// clients and admins (lock-engine.ts, on a serving node) and the active node's replication
// stream (replica-ops.ts, on a standby). The layers are classes, LockEngine extends ReplicaOps
// extends EngineCore, so that both drivers reach the same state without it being public.
import { type Claim, type HandoverCause, LockState } from './claim.ts';
import type { Clock } from './clock.ts';
import { DeadlineHeap } from './deadline-heap.ts';
import type { LockEvent, LockEventListener } from './events.ts';
import type { TokenSource } from '../tokens/token-source.ts';

export const NEVER = Number.POSITIVE_INFINITY;

export abstract class EngineCore {
  protected readonly locks = new Map<string, LockState>();
  protected readonly heap = new DeadlineHeap<Claim>();
  protected readonly listeners: LockEventListener[] = [];
  /** Claim ids are never reused, not even across a promotion (see ReplicaOps). */
  protected nextClaimId = 1;
  protected held = 0;
  protected queued = 0;
  /**
   * Claims that may outlive their connection (sessions that sent a claim key), by claim id: a
   * standby renews them from the active's coalesced renewals, a promotion keeps them.
   */
  protected readonly resumable = new Map<number, Claim>();
  /** Resumable claims renewed (or granted) since the last takeRenewals(), while tracked. */
  protected renewals: Claim[] = [];
  protected trackingRenewals = false;

  constructor(
    protected readonly clock: Clock,
    protected readonly tokens: TokenSource,
  ) {}

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
    return this.heap.peek()?.due ?? NEVER;
  }

  get tokenHighWater(): bigint {
    return this.tokens.highWater;
  }

  get lockCount(): number {
    return this.locks.size;
  }

  get heldCount(): number {
    return this.held;
  }

  get waiterCount(): number {
    return this.queued;
  }

  /** The lock's state (holder and queue), or undefined when nobody holds or waits for it. */
  lock(name: string): LockState | undefined {
    return this.locks.get(name);
  }

  /** Resumable claims (holders and waiters that sent a claim key), live ones only. */
  get resumableCount(): number {
    return this.resumable.size;
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

  /** Every lock that has a holder or waiters. */
  allLocks(): IterableIterator<LockState> {
    return this.locks.values();
  }

  // --- shared internals ---

  protected lockNamed(name: string): LockState {
    return this.locks.get(name) ?? this.addLock(name);
  }

  /** Files a new lock under `name`; the caller has looked and found none. */
  protected addLock(name: string): LockState {
    const lock = new LockState(name);
    this.locks.set(name, lock);
    return lock;
  }

  /** Forgets a lock nobody holds or waits for (unless it has been replaced meanwhile). */
  protected dropIfIdle(lock: LockState): void {
    if (lock.idle && this.locks.get(lock.name) === lock) this.locks.delete(lock.name);
  }

  /** Files a claim that sent a claim key (it must have its keyHash already). */
  protected addResumable(claim: Claim): void {
    this.resumable.set(claim.id, claim);
  }

  /** A resumable claim's lease moved on: the standbys hear of it at the next renewals batch. */
  protected noteRenewal(claim: Claim): void {
    if (this.trackingRenewals && !claim.renewQueued) {
      claim.renewQueued = true;
      this.renewals.push(claim);
    }
  }

  protected endHolder(lock: LockState, holder: Claim, endedAt: number, cause: HandoverCause): void {
    if (holder.keyHash !== null) this.resumable.delete(holder.id);
    holder.state = 'ended';
    this.heap.remove(holder);
    lock.holder = null;
    lock.endedAt = endedAt;
    lock.endCause = cause;
    this.held--;
  }

  /** Takes a waiter out of its queue (and the heap); deletes the lock when nothing is left. */
  protected leaveQueue(claim: Claim, dropIdleLock = true): void {
    const lock = claim.lock;
    if (claim.keyHash !== null) this.resumable.delete(claim.id);
    lock.unlink(claim);
    this.queued--;
    this.heap.remove(claim);
    claim.state = 'ended';
    if (dropIdleLock) this.dropIfIdle(lock);
  }

  protected emit(event: LockEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
