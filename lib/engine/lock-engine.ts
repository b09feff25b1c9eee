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
// with (replicaGrant, ..., reset) in replica-ops.ts; whether a grant may be made now (the
// grant gate, held locks, tokens that could not be issued) in grant-gate.ts. This file is what
// clients and admins do.
import { type AcquireRequest, Claim, type ClaimOwner, type ClaimState, type HandoverCause, type LockState } from './claim.ts';
import { NEVER } from './engine-core.ts';
import { expireEvent, forceReleaseEvent, releaseEvent } from './end-events.ts';
import { GrantGate } from './grant-gate.ts';
import { TokensUnavailable } from './token-contract.ts';

export { DETACHED_OWNER, type ReplicaGrant, type ReplicaWaiter } from './replica-ops.ts';
export { DEFAULT_DETACH_LIMITS, type DetachLimits } from './engine-core.ts';

export type ForceReleaseResult = { ok: true; token: bigint; claim: Claim } | { ok: false; reason: 'not-held' | 'stale-token'; holderToken: bigint | null };

export class LockEngine extends GrantGate {
  private advancing = false;

  /**
   * Asks for `request.name`. The claim is granted now (owner.onGranted is called before this
   * returns) or queued at the tail. Sliding claims (sessions) must be touched within `leaseMs`
   * while queued too, or they leave the queue as dead. A `keyHash` makes the claim resumable:
   * see resume().
   */
  acquire(request: AcquireRequest): Claim {
    const { name, owner, protocol, client, leaseMs, waitMs, sliding } = request;
    if (!(leaseMs > 0 && leaseMs < NEVER) || !(waitMs >= 0)) throw new RangeError(`bad lease ${leaseMs} or wait ${waitMs}`);
    const now = this.catchUp();
    const open = now < this.openUntil;
    const existing = this.locks.get(name);
    // A token before any change: if none can be issued, the engine is left as it was and the
    // caller gets the TokensUnavailable (its client an error naming why).
    const token = open && (existing === undefined || existing.idle) ? this.issue() : 0n;
    const lock = existing ?? this.addLock(name);
    if (lock.parked) this.unpark(lock);
    const claim = new Claim(this.nextClaimId++, lock, owner, protocol, client, leaseMs, sliding, now, request.tag ?? 0);
    claim.clientName = request.clientName ?? null;
    if (sliding) claim.expiresAt = now + leaseMs;
    const keyHash = request.keyHash ?? null;
    if (keyHash !== null) {
      claim.keyHash = keyHash;
      this.addResumable(claim);
    }
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
        type: 'enqueue',
        at: now,
        lock: name,
        claimId: claim.id,
        protocol,
        client,
        clientName: claim.clientName,
        position: lock.waiting,
        waitDeadline: claim.waitDeadline === NEVER ? null : claim.waitDeadline,
      });
    }
    return claim;
  }

  /**
   * Releases the keyed grant that `token` names. 'stale' when that token no longer holds `name`;
   * 'session-claim' when it is held by a session: a session's owner is its connection, the only
   * one that may end it (by closing), so a release by token would end it without its owner
   * knowing. Nothing changes in either case.
   */
  release(name: string, token: bigint): 'ok' | 'stale' | 'session-claim' {
    const now = this.catchUp();
    const lock = this.locks.get(name);
    const holder = lock?.holder;
    if (lock === undefined || !holder || holder.token !== token) return 'stale';
    if (holder.protocol === 'session') return 'session-claim';
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
    if (claim.sliding && claim.state !== 'ended' && claim.expiresAt > now) {
      claim.expiresAt = now + claim.leaseMs;
      if (claim.keyHash !== null) this.noteRenewal(claim);
    }
  }

  /**
   * A heartbeat from a sliding claim's client (the session's answer to it follows from the
   * state returned). A lease that lapsed before the heartbeat came ends now, as advance() will
   * when its timer fires: a late ACQUIRED would confirm ownership the server has already taken
   * back. The lease itself is restarted by touch(), on any input, before the heartbeat is read.
   */
  heartbeat(claim: Claim): ClaimState {
    if (claim.state !== 'ended' && claim.expiresAt <= this.clock.now()) this.advance();
    return claim.state;
  }

  /**
   * A resumable claim's connection is gone without its client closing it: the claim stays, held
   * or queued, owned by `owner` (a detached owner), until RESUME takes it up or its lease ends,
   * which is then at most the detach limit's maxMs away (limitDetached). False, and nothing
   * changes, when it cannot stay: not resumable, ended, or maxClaims already waiting (counted);
   * the caller then ends it as a close would.
   */
  detach(claim: Claim, owner: ClaimOwner): boolean {
    if (claim.keyHash === null || claim.state === 'ended' || owner.detached !== true) return false;
    if (owner.awaitingResume === true && !this.roomToDetach()) return false;
    const now = this.clock.now();
    claim.owner = owner;
    if (owner.awaitingResume === true) this.fileDetached(claim, now);
    if (this.listeners.length > 0) this.emit({ type: 'detach', at: now, lock: claim.lock.name, claimId: claim.id, protocol: claim.protocol });
    return true;
  }

  /**
   * Takes up the detached resumable claim on `name` whose key hashes to `keyHash` (held or
   * queued, no connection: carried over by a promotion): `owner` owns it from now on, and its
   * lease restarts (a resume is a sign of life). Null, and nothing changes, when there is no such
   * claim: none with that key (a wrong key is an unknown claim), one whose lease has lapsed (it
   * ends now, as advance() would have ended it), or one still owned by a connection.
   */
  resume(name: string, keyHash: string, owner: ClaimOwner): Claim | null {
    this.catchUp();
    const lock = this.locks.get(name);
    if (lock === undefined) return null;
    let claim = lock.holder;
    if (claim === null || claim.keyHash !== keyHash || claim.owner.detached !== true) {
      claim = lock.head;
      while (claim !== null && (claim.keyHash !== keyHash || claim.owner.detached !== true)) claim = claim.next;
    }
    if (claim === null) return null;
    const now = this.clock.now();
    if (!(claim.expiresAt > now)) {
      this.advance();
      return null;
    }
    const was = claim.owner;
    if (was.awaitingResume === true) this.detachedNow--;
    claim.owner = owner;
    claim.expiresAt = now + claim.leaseMs;
    this.noteRenewal(claim);
    was.onResumed?.(claim);
    if (this.listeners.length > 0) this.emit({ type: 'resume', at: now, lock: claim.lock.name, claimId: claim.id, protocol: claim.protocol });
    return claim;
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
      this.emit(forceReleaseEvent(holder, now));
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
    if (this.listeners.length > 0) {
      this.emit({ type: 'kick', at: now, lock: name, claimId, protocol: claim.protocol, client: claim.client, waitedMs: now - claim.enqueuedAt });
    }
    claim.owner.onEnded(claim, 'kicked');
    return true;
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
  /**
   * Ends what is already due before an operation acts, and returns the time the operation
   * runs at: one clock read per operation (a read is about 0.1 us, a fifth of the engine's own
   * cost per request), read again only when advance() ran.
   */
  protected catchUp(): number {
    const now = this.clock.now();
    const top = this.heap.peek();
    if (top === undefined || top.due > now) return now;
    this.advance();
    return this.clock.now();
  }

  // --- internals ---

  /** `token` is taken by the caller before it changes anything (see TokenSource.next: it may throw). */
  private grant(lock: LockState, claim: Claim, now: number, cause: HandoverCause | null, token: bigint): void {
    claim.token = token;
    claim.state = 'holding';
    claim.grantedAt = now;
    if (!claim.sliding) claim.expiresAt = now + claim.leaseMs;
    if (claim.keyHash !== null) {
      // A waiter granted from the queue left the resumable index with leaveQueue(): file it
      // again, or replication would ship its grant without the key hash and a successor would
      // drop the claim at promotion (found by the chaos checker: claim-unknown after MOVED, and
      // the lock granted to the next waiter while the client still worked).
      this.addResumable(claim);
      // A standby learns a sliding grant's real lease end from the next renewals batch.
      this.noteRenewal(claim);
    }
    lock.holder = claim;
    this.held++;
    // A waiter between connections that reaches the lock still waits for its client (leaveQueue uncounted it).
    if (claim.owner.awaitingResume === true) this.detachedNow++;
    claim.due = claim.expiresAt;
    this.heap.update(claim);
    if (this.listeners.length > 0) {
      this.emit({
        type: 'grant',
        at: now,
        lock: lock.name,
        claimId: claim.id,
        token: claim.token,
        protocol: claim.protocol,
        client: claim.client,
        clientName: claim.clientName,
        leaseMs: claim.leaseMs,
        sliding: claim.sliding,
        waitedMs: now - claim.enqueuedAt,
        handoverMs: cause === null ? null : Math.max(0, now - lock.endedAt),
        handoverCause: cause,
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
  protected handOver(lock: LockState, now: number): void {
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
      this.emit(releaseEvent(holder, now, cause));
    }
  }

  private expire(holder: Claim, now: number): void {
    const lock = holder.lock;
    // The lease ended at expiresAt, whenever the timer got round to it: handover latency counts from there.
    this.endHolder(lock, holder, Math.min(holder.expiresAt, now), 'expiry');
    if (this.listeners.length > 0) {
      this.emit(expireEvent(holder, now));
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
