// The lock engine: a pure state machine over named locks. No sockets, no real clock, no
// timers: time comes from the injected Clock, and the engine reports its next deadline
// (`nextDeadline()`) for the caller to wake it (`advance()`). Every state change is emitted
// on one event stream.
//
// Deadlines (leases and waits) live in one indexed binary heap (see deadline-heap.ts).
// Sliding leases are extended lazily: a heartbeat only moves `claim.expiresAt`; when the heap
// pops the stale deadline, the claim is re-filed under its real one. A heartbeat is O(1).
//
// State and the accessors live in engine-core.ts; the operations a standby mirrors the active
// with (replicaGrant, ..., reset) in replica-ops.ts. This file is what clients and admins do.
import { Claim, type ClaimOwner, type Protocol } from './claim.ts';
import { NEVER } from './engine-core.ts';
import type { HandoverCause, LockState } from './lock-state.ts';
import { ReplicaOps } from './replica-ops.ts';
import { MAX_TOKEN, TokensUnavailable } from '../tokens/token-source.ts';

export { DETACHED_OWNER, type ReplicaGrant, type ReplicaWaiter } from './replica-ops.ts';

export type ForceReleaseResult =
  | { ok: true; token: bigint; claim: Claim }
  | { ok: false; reason: 'not-held' | 'stale-token'; holderToken: bigint | null };

export class LockEngine extends ReplicaOps {
  /**
   * The grant gate: a grant (or handover) is made only while `clock.now() < openUntil`. It is
   * the one check every path that grants goes through (acquire, and handOver for release,
   * disconnect, lease expiry, force-release and a handoff called off), made with the clock read
   * of the grant itself, so no order of timers and socket reads after a pause can get past it.
   * +Infinity on a node that never gates (a single daemon: one comparison, nothing else);
   * -Infinity while handovers are held. See setGrantWindow and server/cluster/role-lease.ts.
   */
  private openUntil = NEVER;
  /** The window the cluster gave (setGrantWindow); +Infinity when it never did. */
  private windowUntil = NEVER;
  private handoversHeld = false;
  /**
   * Free locks with a queue that got no holder: the gate was shut, or no token could be issued
   * (storage unavailable, u64 exhausted). Handed on by releaseHandovers / retryHeldGrants.
   */
  private readonly heldLocks = new Set<LockState>();
  /** Why the last grant that needed a token could not be made, while that lasts (null once a token is issued again). */
  private refusal: TokensUnavailable | null = null;

  private advancing = false;

  /**
   * Asks for `name`. The claim is granted now (owner.onGranted is called before this returns)
   * or queued at the tail. `waitMs` 0 waits forever. Sliding claims (sessions) must be
   * touched within `leaseMs` while queued too, or they leave the queue as dead.
   */
  acquire(name: string, owner: ClaimOwner, protocol: Protocol, client: string, leaseMs: number, waitMs: number, sliding: boolean, tag = 0): Claim {
    if (!(leaseMs > 0 && leaseMs < NEVER) || !(waitMs >= 0)) throw new RangeError(`bad lease ${leaseMs} or wait ${waitMs}`);
    this.catchUp();
    const now = this.clock.now();
    const open = now < this.openUntil;
    const existing = this.locks.get(name);
    // A token before any change: if none can be issued, the engine is left as it was and the
    // caller gets the TokensUnavailable (its client an error naming why).
    const token = open && (existing === undefined || existing.idle) ? this.issue() : 0n;
    const lock = existing ?? this.addLock(name);
    const claim = new Claim(this.nextClaimId++, lock, owner, protocol, client, leaseMs, sliding, now, tag);
    if (sliding) claim.expiresAt = now + leaseMs;
    if (open && lock.idle) {
      this.grant(lock, claim, now, null, token);
      // The owner may have ended the claim itself inside onGranted; then it is already handed on.
      if (!owner.onGranted(claim) && claim.state === 'holding') {
        this.dropHolder(lock, claim, now, 'disconnect');
        this.handOver(lock, now);
      }
      return claim;
    }
    claim.waitDeadline = waitMs > 0 ? now + waitMs : NEVER;
    // A free lock behind a shut gate: the request waits, and is granted when the gate opens.
    if (lock.holder === null && lock.head === null) this.heldLocks.add(lock);
    lock.enqueue(claim);
    this.queued++;
    claim.due = Math.min(claim.waitDeadline, sliding ? claim.expiresAt : NEVER);
    if (claim.due !== NEVER) this.heap.push(claim);
    if (this.listeners.length > 0) {
      this.emit({
        type: 'enqueue', at: now, lock: name, claimId: claim.id, protocol, client,
        position: lock.waiting, waitDeadline: claim.waitDeadline === NEVER ? null : claim.waitDeadline,
      });
    }
    return claim;
  }

  /** Releases the grant that `token` names. 'stale' when that token no longer holds `name`; nothing changes then. */
  release(name: string, token: bigint): 'ok' | 'stale' {
    this.catchUp();
    const lock = this.locks.get(name);
    const holder = lock?.holder;
    if (lock === undefined || !holder || holder.token !== token) return 'stale';
    const now = this.clock.now();
    this.dropHolder(lock, holder, now, 'release');
    this.handOver(lock, now);
    return 'ok';
  }

  /** The owner is gone (connection closed): a holder releases, a waiter leaves the queue. */
  end(claim: Claim): void {
    if (claim.state === 'ended') return;
    const now = this.clock.now();
    if (claim.state === 'holding') {
      this.dropHolder(claim.lock, claim, now, 'disconnect');
      this.handOver(claim.lock, now);
    } else {
      this.leaveQueue(claim);
      if (this.listeners.length > 0) {
        this.emit({ type: 'leave-queue', at: now, lock: claim.name, claimId: claim.id, protocol: claim.protocol, reason: 'disconnect' });
      }
    }
  }

  /** A sign of life from a sliding claim's client: its lease restarts. */
  touch(claim: Claim): void {
    const now = this.clock.now();
    // A lease that has already lapsed stays lapsed, even if advance() has not got round to it yet.
    if (claim.sliding && claim.state !== 'ended' && claim.expiresAt > now) claim.expiresAt = now + claim.leaseMs;
  }

  /** Admin: ends the holder of `name` (only the one holding `token`, when given) and hands the lock on. */
  forceRelease(name: string, token?: bigint): ForceReleaseResult {
    this.catchUp();
    const lock = this.locks.get(name);
    const holder = lock?.holder ?? null;
    if (lock === undefined || holder === null) return { ok: false, reason: 'not-held', holderToken: null };
    if (token !== undefined && holder.token !== token) return { ok: false, reason: 'stale-token', holderToken: holder.token };
    const now = this.clock.now();
    this.endHolder(lock, holder, now, 'force-release');
    if (this.listeners.length > 0) {
      this.emit({ type: 'force-release', at: now, lock: name, claimId: holder.id, token: holder.token, protocol: holder.protocol });
    }
    holder.owner.onEnded(holder, 'force-released');
    this.handOver(lock, now);
    return { ok: true, token: holder.token, claim: holder };
  }

  /** Admin: removes waiter `claimId` from the queue of `name`. */
  kick(name: string, claimId: number): boolean {
    this.catchUp();
    const lock = this.locks.get(name);
    if (lock === undefined) return false;
    let claim = lock.head;
    while (claim !== null && claim.id !== claimId) claim = claim.next;
    if (claim === null) return false;
    const now = this.clock.now();
    this.leaveQueue(claim);
    if (this.listeners.length > 0) this.emit({ type: 'kick', at: now, lock: name, claimId, protocol: claim.protocol });
    claim.owner.onEnded(claim, 'kicked');
    return true;
  }

  /**
   * A node handing its role to a successor makes no new grant after its last replicated event:
   * a lock that comes free meanwhile (a session holder's connection closed) keeps its queue
   * and no holder, and a request for a free lock waits, until releaseHandovers(), so no grant
   * can be made that the successor never hears of. A node that was frozen holds them the same
   * way until it knows whether it keeps its role.
   */
  holdHandovers(): void {
    this.handoversHeld = true;
    this.openUntil = Number.NEGATIVE_INFINITY;
  }

  /** Handovers go on (as far as the grant window allows); locks that came free meanwhile go to the head of their queue now. */
  releaseHandovers(): void {
    this.handoversHeld = false;
    this.openUntil = this.windowUntil;
    this.retryHeldGrants();
  }

  /**
   * Grants are made only while `clock.now() < until` (monotonic ms): the cluster's word that no
   * peer can have taken the role over before then. A window that has passed shuts the gate by
   * itself, with no call: that is the point. Widening it hands nothing on; releaseHandovers and
   * retryHeldGrants do.
   */
  setGrantWindow(until: number): void {
    this.windowUntil = until;
    if (!this.handoversHeld) this.openUntil = until;
  }

  /**
   * Replaces the whole state (see ReplicaOps.reset): the held locks go with it, so that nothing
   * held before a node followed another is handed on later, and a standby never advances.
   */
  override reset(): void {
    this.heldLocks.clear();
    super.reset();
  }

  /** Whether a grant could be made now (the gate; not whether a token can be issued). */
  grantsOpen(): boolean {
    return this.clock.now() < this.openUntil;
  }

  /** Why grants that need a new token fail now, or null: the last issue failed and none has succeeded since. */
  get tokenRefusal(): TokensUnavailable | null {
    return this.refusal;
  }

  /**
   * Why this node grants nothing that needs a new token, for people (health, metrics, the
   * dashboard): every u64 token is used, or the last try to store a block's ceiling failed.
   */
  grantRefusal(): TokensUnavailable['reason'] | null {
    if (this.tokens.highWater >= MAX_TOKEN) return 'tokens-exhausted';
    return this.refusal?.reason ?? null;
  }

  /** Free locks with waiters that are waiting for the gate or for a token. */
  get heldGrantCount(): number {
    return this.heldLocks.size;
  }

  /**
   * Hands on the locks that came free while no grant could be made, if one can be made now.
   * The daemon calls it when storage may be back (a timer while heldGrantCount > 0).
   */
  retryHeldGrants(): void {
    if (this.heldLocks.size === 0) {
      // Nobody waits, but the last save failed: try one now (a token skipped), so that health
      // says when storage is back without waiting for a client to ask.
      if (this.refusal?.reason === 'storage-unavailable' && this.grantsOpen()) {
        try {
          this.issue();
        } catch (err) {
          if (!(err instanceof TokensUnavailable)) throw err;
        }
      }
      return;
    }
    this.catchUp();
    const now = this.clock.now();
    if (!(now < this.openUntil)) return;
    const held = [...this.heldLocks];
    this.heldLocks.clear();
    for (const lock of held) {
      if (lock.holder === null && this.locks.get(lock.name) === lock) this.handOver(lock, now);
    }
  }

  /** Runs every deadline that has come: lease expiries and wait timeouts. */
  advance(): void {
    // Owners may call back into the engine from onEnded/onGranted; a nested call must not
    // start a second pass over the heap while this one is running.
    if (this.advancing) return;
    this.advancing = true;
    try {
      const now = this.clock.now();
      for (let top = this.heap.peek(); top !== undefined && top.due <= now; top = this.heap.peek()) {
        const real = top.state === 'holding' ? top.expiresAt : this.queueDeadline(top);
        if (real > now) {
          top.due = real; // a sliding lease was extended since it was filed
          this.heap.update(top);
          continue;
        }
        this.heap.remove(top);
        if (top.state === 'holding') this.expire(top, now);
        else this.timeOut(top, now);
      }
    } finally {
      this.advancing = false;
    }
  }

  /**
   * Runs deadlines that have passed but whose timer has not fired yet, so that no operation
   * sees a lease or a wait that is already over (a release after the lease end is STALE).
   */
  private catchUp(): void {
    const top = this.heap.peek();
    if (top !== undefined && top.due <= this.clock.now()) this.advance();
  }

  // --- internals ---

  /** A token, remembering why there was none (try/catch costs nothing on the path that does not throw). */
  private issue(): bigint {
    try {
      const token = this.tokens.next();
      if (this.refusal !== null) this.refusal = null;
      return token;
    } catch (err) {
      if (err instanceof TokensUnavailable) this.refusal = err;
      throw err;
    }
  }

  /** `token` is taken by the caller before it changes anything (see TokenSource.next: it may throw). */
  private grant(lock: LockState, claim: Claim, now: number, cause: HandoverCause | null, token: bigint): void {
    claim.token = token;
    claim.state = 'holding';
    claim.grantedAt = now;
    if (!claim.sliding) claim.expiresAt = now + claim.leaseMs;
    lock.holder = claim;
    this.held++;
    claim.due = claim.expiresAt;
    this.heap.update(claim);
    if (this.listeners.length > 0) {
      this.emit({
        type: 'grant', at: now, lock: lock.name, claimId: claim.id, token: claim.token, protocol: claim.protocol,
        client: claim.client, leaseMs: claim.leaseMs, sliding: claim.sliding, waitedMs: now - claim.enqueuedAt,
        handoverMs: cause === null ? null : Math.max(0, now - lock.endedAt), handoverCause: cause,
      });
    }
  }

  /** When a waiter leaves the queue unless granted first: its wait deadline or its sliding lease. */
  private queueDeadline(waiter: Claim): number {
    return Math.min(waiter.waitDeadline, waiter.sliding ? waiter.expiresAt : NEVER);
  }

  /**
   * Hands the lock to the head of its queue, skipping waiters whose grant cannot be delivered.
   * A waiter whose deadline had passed when the lock came free (advance() had not run yet)
   * times out instead: it left the queue before the lock was there to take.
   */
  private handOver(lock: LockState, now: number): void {
    if (!(now < this.openUntil) && lock.head !== null) {
      this.heldLocks.add(lock);
      return;
    }
    // What ended the last real holder: an undeliverable grant below must not hide it.
    const endedAt = lock.endedAt;
    const endCause = lock.endCause;
    for (let next = lock.head; next !== null; next = lock.head) {
      // An owner callback below may have re-entered the engine and taken the lock already.
      if (lock.holder !== null) return;
      if (this.queueDeadline(next) <= endedAt) {
        this.timeOut(next, now);
        continue;
      }
      let token: bigint;
      try {
        token = this.issue();
      } catch (err) {
        // No token (storage or u64): the lock stays free with its queue, nothing else changes;
        // the release (or expiry, or disconnect) that freed it has happened all the same.
        if (!(err instanceof TokensUnavailable)) throw err;
        this.heldLocks.add(lock);
        return;
      }
      this.leaveQueue(next, false);
      this.grant(lock, next, now, endCause, token);
      // Delivered, or the owner ended the claim inside onGranted (which already handed the lock on).
      if (next.owner.onGranted(next) || next.state !== 'holding') return;
      this.dropHolder(lock, next, now, 'disconnect');
      lock.endedAt = endedAt;
      lock.endCause = endCause;
    }
    this.dropIfIdle(lock);
  }

  private dropHolder(lock: LockState, holder: Claim, now: number, cause: 'release' | 'disconnect'): void {
    this.endHolder(lock, holder, now, cause);
    if (this.listeners.length > 0) {
      this.emit({ type: 'release', at: now, lock: lock.name, claimId: holder.id, token: holder.token, protocol: holder.protocol, cause });
    }
  }

  private expire(holder: Claim, now: number): void {
    const lock = holder.lock;
    // The lease ended at expiresAt, whenever the timer got round to it: handover latency counts from there.
    this.endHolder(lock, holder, Math.min(holder.expiresAt, now), 'expiry');
    if (this.listeners.length > 0) {
      this.emit({ type: 'expire', at: now, lock: lock.name, claimId: holder.id, token: holder.token, protocol: holder.protocol });
    }
    holder.owner.onEnded(holder, 'expired');
    this.handOver(lock, now);
  }

  private timeOut(waiter: Claim, now: number): void {
    const timedOut = waiter.waitDeadline <= now;
    this.leaveQueue(waiter);
    if (this.listeners.length > 0) {
      this.emit({ type: 'leave-queue', at: now, lock: waiter.name, claimId: waiter.id, protocol: waiter.protocol, reason: timedOut ? 'timeout' : 'expired' });
    }
    waiter.owner.onEnded(waiter, timedOut ? 'wait-timeout' : 'expired');
  }
}
