// Handovers, a part of the engine (lock-engine.ts): how a lock changes hands and what time ends.
// A grant (with its token and event), a free lock handed to the head of its queue (skipping
// waiters whose grant cannot be delivered, or filing the lock with the grant gate when no grant
// can be made), and the deadlines that end holders and waiters (advance). The serving
// operations (serving-ops.ts) call it after each change they make; the daemon's timer, through
// LockEngine.advance; the cluster, when the gate opens again (releaseHandovers).
//
// Deadlines (leases and waits) of object-form claims live in one indexed 4-ary heap (see
// deadline-heap.ts), the compact holders' lease ends in their lanes (slot-deadlines.ts). Sliding leases are extended lazily: a heartbeat only moves `claim.expiresAt`; when the heap
// pops the stale deadline, the claim is re-filed under its real one. A heartbeat is O(1).
import type { Claim, ClaimOwner, HandoverCause, LockState } from './claim.ts';
import type { Clock } from './clock.ts';
import { expireEvent, releaseEvent } from './end-events.ts';
import type { GrantGate } from './grant-gate.ts';
import { type LockTable, NEVER } from './lock-table.ts';
import { TokensUnavailable } from '../tokens/token-contract.ts';

export class Handovers {
  private advancing = false;

  constructor(
    private readonly table: LockTable,
    private readonly gate: GrantGate,
    private readonly clock: Clock,
  ) {}

  /** Runs every deadline that has come: lease expiries and wait timeouts. */
  advance(): void {
    // Owners may call back into the engine from onEnded/onGranted; a nested call must not
    // start a second pass over the heap while this one is running.
    if (this.advancing) return;
    this.advancing = true;
    try {
      const now = this.clock.now();
      const heap = this.table.heap;
      const slots = this.table.compact.deadlines;
      for (;;) {
        // The object heap and the compact holders' deadlines as one: the earlier first.
        const slotDue = slots.peekDue();
        if (slotDue < heap.peekDue()) {
          if (slotDue > now) break;
          this.expireCompact(slots.peek(), now);
          continue;
        }
        const top = heap.peek();
        const filed = heap.peekDue();
        if (top === undefined || filed > now) break;
        const real = top.state === 'holding' ? top.expiresAt : this.queueDeadline(top);
        if (real > filed) {
          // A sliding lease was extended since it was filed: filed again under its real end, also
          // when that has passed too, so what falls due in one pass ends in deadline order.
          heap.update(top, real);
          continue;
        }
        heap.remove(top);
        if (top.state === 'holding') this.expire(top, now);
        else this.timeOut(top, now);
      }
    } finally {
      this.advancing = false;
    }
  }

  /** Handovers go on (as far as the grant window allows); locks that came free meanwhile go to the head of their queue now. */
  releaseHandovers(): void {
    this.gate.stopHolding();
    this.retryHeldGrants();
  }

  /**
   * Hands on the locks that came free while no grant could be made, if one can be made now.
   * The daemon calls it when storage may be back (a timer while heldGrantCount > 0).
   */
  retryHeldGrants(): void {
    if (this.gate.heldGrantCount === 0) {
      this.gate.retryRefusedIssue();
      return;
    }
    const now = this.catchUp();
    if (!this.gate.isOpenAt(now)) return;
    for (const lock of this.gate.takeHeld()) {
      if (lock.holder === null && lock.filed) this.handOver(lock, now);
    }
  }

  /**
   * Runs deadlines that have passed but whose timer has not fired yet, so that no operation
   * sees a lease or a wait that is already over (a release after the lease end is STALE), and
   * returns the time the operation runs at: one clock read per operation (a read is about
   * 0.1 us, a fifth of the engine's own cost per request), read again only when advance() ran.
   */
  catchUp(): number {
    const now = this.clock.now();
    if (this.table.nextDeadline() > now) return now;
    this.advance();
    return this.clock.now();
  }

  /** `token` is taken by the caller before it changes anything (see TokenSource.next: it may throw). */
  /**
   * `cause` and `endedAt`: what ended the last holder and when, for a handover (null for a free
   * lock); passed in, since the grant may empty the queue that kept them (lock-state.ts).
   */
  grant(lock: LockState, claim: Claim, now: number, cause: HandoverCause | null, token: bigint, endedAt = 0): void {
    claim.token = token;
    claim.state = 'holding';
    claim.grantedAt = now;
    if (!claim.sliding) claim.expiresAt = now + claim.leaseMs;
    if (claim.keyHash !== null) {
      // A waiter granted from the queue left the resumable index with leaveQueue(): file it
      // again, or replication would ship its grant without the key hash and a successor would
      // drop the claim at promotion (found by the chaos checker: claim-unknown after MOVED, and
      // the lock granted to the next waiter while the client still worked).
      this.table.addResumable(claim);
      // A standby learns a sliding grant's real lease end from the next renewals batch.
      this.table.noteRenewal(claim);
    }
    lock.holder = claim;
    this.table.held++;
    // A waiter between connections that reaches the lock still waits for its client (leaveQueue uncounted it).
    if (claim.owner.awaitingResume === true) this.table.detachedNow++;
    this.table.heap.update(claim, claim.expiresAt);
    if (this.table.listeners.length > 0) {
      this.table.emit({
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
        handoverMs: cause === null ? null : Math.max(0, now - endedAt),
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
  handOver(lock: LockState, now: number): void {
    if (!this.gate.isOpenAt(now) && lock.head !== null) {
      this.gate.fileHeld(lock);
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
        token = this.gate.issue();
      } catch (err) {
        // No token (storage or u64): the lock stays free with its queue, nothing else changes;
        // the release (or expiry, or disconnect) that freed it has happened all the same.
        if (!(err instanceof TokensUnavailable)) throw err;
        this.gate.fileHeld(lock);
        return;
      }
      this.table.leaveQueue(next, false);
      this.grant(lock, next, now, endCause, token, endedAt);
      // Delivered, or the owner ended the claim inside onGranted (which already handed the lock on).
      if (next.owner.onGranted(next) || next.state !== 'holding') return;
      this.dropHolder(lock, next, now, 'disconnect');
      lock.noteEnd(endedAt, endCause);
    }
    this.table.dropIfIdle(lock);
  }

  dropHolder(lock: LockState, holder: Claim, now: number, cause: 'release' | 'disconnect'): void {
    this.table.endHolder(lock, holder, now, cause);
    if (this.table.listeners.length > 0) {
      this.table.emit(releaseEvent(holder, now, cause));
    }
  }

  /** A compact holder released (by token) or undeliverable: ended, its event, and its slot parked. */
  endCompact(slot: number, now: number, cause: 'release' | 'disconnect', token: bigint): void {
    const table = this.table;
    const compact = table.compact;
    const event = table.listeners.length > 0 ? compact.releaseEvent(slot, now, cause, token) : null;
    compact.unhold(slot);
    table.held--;
    if (event !== null) table.emit(event);
    // A listener may have taken the lock again meanwhile.
    table.parkCompactIfIdle(slot);
  }

  /** A compact holder's lease ran out: as expire() for an object holder. */
  private expireCompact(slot: number, now: number): void {
    const table = this.table;
    const compact = table.compact;
    const view = compact.view(slot);
    compact.unhold(slot);
    table.held--;
    if (table.listeners.length > 0) table.emit(expireEvent(view, now));
    (view.owner as ClaimOwner).onEnded(view, 'expired');
    table.parkCompactIfIdle(slot);
  }

  private expire(holder: Claim, now: number): void {
    const lock = holder.lock;
    // The lease ended at expiresAt, whenever the timer got round to it: handover latency counts from there.
    this.table.endHolder(lock, holder, Math.min(holder.expiresAt, now), 'expiry');
    if (this.table.listeners.length > 0) {
      this.table.emit(expireEvent(holder, now));
    }
    holder.owner.onEnded(holder, 'expired');
    this.handOver(lock, now);
  }

  private timeOut(waiter: Claim, now: number): void {
    const timedOut = waiter.waitDeadline <= now;
    this.table.leaveQueue(waiter);
    if (this.table.listeners.length > 0) {
      this.table.emit({
        type: 'leave-queue',
        at: now,
        lock: waiter.name,
        claimId: waiter.id,
        protocol: waiter.protocol,
        reason: timedOut ? 'timeout' : 'expired',
      });
    }
    waiter.owner.onEnded(waiter, timedOut ? 'wait-timeout' : 'expired');
  }
}
