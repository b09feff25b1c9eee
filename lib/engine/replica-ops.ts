// Replica operations, a part of the engine (lock-engine.ts): how a standby's engine mirrors the
// active node's engine from its replication stream, over the shared lock table (lock-table.ts). The stream says what happened (this claim now holds, that one left the
// queue), so nothing here decides anything: no handover, no token is issued, no owner is
// called back. Replicated claims carry the active's claim ids and tokens and belong to
// DETACHED_OWNER, since no connection on this node is waiting for them.
//
// Replicated holders are filed in the deadline heap like any holder, but a standby never calls
// advance(): only after a promotion does the new active start advancing, and then their leases
// run out where the active's would have. Replicated waiters are not in the heap: a promotion
// drops them (their connections were on the old active), except resumable session waiters
// (those that sent a claim key), which keepDetached files there to wait for their client.
import { Claim, type ClaimOwner, type HandoverCause, type LockState } from './claim.ts';
import type { Clock } from './clock.ts';
import { endedHolder } from './end-events.ts';
import type { EndedHolder } from './events.ts';
import { type LockTable, NEVER } from './lock-table.ts';
import { replicaCompactEnd, replicaCompactGrant } from './replica-compact.ts';
import { replicaEndEvent, replicaGrantEvent } from './replica-events.ts';
import type { ReplicaGrant, ReplicaHolderEnd, ReplicaQueueLeave, ReplicaWaiter } from './replica-types.ts';

export type { ReplicaGrant, ReplicaHolderEnd, ReplicaQueueLeave, ReplicaWaiter } from './replica-types.ts';
import type { TokenSource } from '../tokens/token-source.ts';

/** The owner of replicated claims: a grant is always taken, an end is nobody's business. */
export const DETACHED_OWNER: ClaimOwner = Object.freeze({
  detached: true,
  onGranted: () => true,
  onEnded: () => {},
});

const HANDOVER_CAUSE: Record<ReplicaHolderEnd, HandoverCause> = {
  release: 'release',
  disconnect: 'disconnect',
  expire: 'expiry',
  'force-release': 'force-release',
};

export class ReplicaOps {
  constructor(
    private readonly table: LockTable,
    private readonly clock: Clock,
    private readonly tokens: TokenSource,
  ) {}

  /**
   * Installs the active's holder of `g.lock`. A replicated waiter with that claim id leaves the
   * queue (the grant event says so); a different holder still in place (a missed event) ends
   * silently first.
   */
  replicaGrant(g: ReplicaGrant, emit = true): void {
    this.claimIdSeen(g.claimId);
    // A token issued by the active: none issued here after a promotion may be at or below it.
    this.tokens.raiseFloor?.(g.token);
    const now = this.clock.now();
    if (g.protocol === 'keyed' && !g.sliding && !g.keyHash && this.table.compactOn && typeof this.table.locks.get(g.lock) !== 'object') {
      replicaCompactGrant(this.table, g, DETACHED_OWNER, now, emit);
      return;
    }
    const lock = this.table.lockNamed(g.lock);
    const waiter = findWaiter(lock, g.claimId);
    if (waiter !== null) this.table.leaveQueue(waiter, false);
    if (lock.holder !== null) this.table.endHolder(lock, lock.holder, now, 'release');
    const grantedAt = now - g.heldForMs;
    // A replicated waiter arrived here when the active queued it: its wait is what the grant
    // event says (a 0 made a new active's charts count a standby's grants as never queued).
    const enqueuedAt = waiter === null ? grantedAt : Math.min(waiter.enqueuedAt, grantedAt);
    const claim = new Claim(g.claimId, lock, DETACHED_OWNER, g.protocol, g.client, g.leaseMs, g.sliding, enqueuedAt, 0);
    claim.token = g.token;
    claim.clientName = g.clientName ?? null;
    claim.state = 'holding';
    claim.grantedAt = grantedAt;
    claim.expiresAt = now + g.remainingMs;
    if (g.keyHash) {
      claim.keyHash = g.keyHash;
      this.table.addResumable(claim);
    }
    lock.holder = claim;
    this.table.held++;
    this.table.heap.push(claim, claim.expiresAt);
    if (emit && this.table.listeners.length > 0) {
      this.table.emit(replicaGrantEvent(g, now, claim.clientName, grantedAt - enqueuedAt));
    }
  }

  /**
   * Ends holder `claimId` of `name` as the active reports, without handing the lock on (the
   * stream names the next holder itself). False, and no change, when that claim does not hold it.
   */
  replicaEndHolder(name: string, claimId: number, how: ReplicaHolderEnd, emit = true): boolean {
    this.claimIdSeen(claimId);
    const entry = this.table.locks.get(name);
    if (typeof entry === 'number') return replicaCompactEnd(this.table, entry, claimId, how, this.clock.now(), emit);
    const lock = entry;
    const holder = lock?.holder;
    if (lock === undefined || !holder || holder.id !== claimId) return false;
    const now = this.clock.now();
    this.table.endHolder(lock, holder, now, HANDOVER_CAUSE[how]);
    this.table.dropIfIdle(lock);
    if (emit && this.table.listeners.length > 0) this.table.emit(replicaEndEvent(holder, how, now));
    return true;
  }

  /** Appends the active's waiter `w` to the tail of its queue. */
  replicaEnqueue(w: ReplicaWaiter, emit = true): void {
    this.claimIdSeen(w.claimId);
    const now = this.clock.now();
    const lock = this.table.lockNamed(w.lock);
    const claim = new Claim(w.claimId, lock, DETACHED_OWNER, w.protocol, w.client, w.leaseMs, w.sliding, now - w.waitingForMs, 0);
    claim.waitDeadline = w.waitRemainingMs === null ? NEVER : now + w.waitRemainingMs;
    claim.clientName = w.clientName ?? null;
    if (w.sliding) claim.expiresAt = now + w.leaseMs;
    if (w.keyHash) {
      claim.keyHash = w.keyHash;
      this.table.addResumable(claim);
    }
    lock.enqueue(claim);
    this.table.queued++;
    if (emit && this.table.listeners.length > 0) {
      this.table.emit({
        type: 'enqueue',
        at: now,
        lock: w.lock,
        claimId: w.claimId,
        protocol: w.protocol,
        client: w.client,
        clientName: claim.clientName,
        position: lock.waiting,
        waitDeadline: w.waitRemainingMs === null ? null : claim.waitDeadline,
      });
    }
  }

  /** Takes waiter `claimId` out of the queue of `name`. False, and no change, when it is not there. */
  replicaLeaveQueue(name: string, claimId: number, reason: ReplicaQueueLeave, emit = true): boolean {
    this.claimIdSeen(claimId);
    const lock = this.table.locks.get(name);
    // A compact lock has nobody waiting.
    const waiter = lock === undefined || typeof lock === 'number' ? null : findWaiter(lock, claimId);
    if (waiter === null) return false;
    const now = this.clock.now();
    this.table.leaveQueue(waiter);
    if (emit && this.table.listeners.length > 0) {
      if (reason === 'kick') {
        this.table.emit({ type: 'kick', at: now, lock: name, claimId, protocol: waiter.protocol, client: waiter.client, waitedMs: now - waiter.enqueuedAt });
      } else this.table.emit({ type: 'leave-queue', at: now, lock: name, claimId, protocol: waiter.protocol, reason });
    }
    return true;
  }

  /**
   * A sign of life reached the active: claim `claimId`'s lease (a holder's, or a resumable
   * waiter's) now ends `remainingMs` from now, counted from when this node reads it.
   */
  replicaRenew(name: string, claimId: number, remainingMs: number): void {
    this.claimIdSeen(claimId);
    const lock = this.table.objectLock(name);
    const holder = lock?.holder;
    const claim = holder && holder.id === claimId ? holder : this.table.resumable.get(claimId);
    if (claim === undefined || claim.state === 'ended' || claim.lock !== lock) return;
    claim.expiresAt = this.clock.now() + remainingMs;
    // Waiters are not in a standby's heap; a holder's later deadline is filed lazily (advance()
    // re-files a stale one), an earlier one must be filed now.
    if (claim.state === 'holding' && claim.expiresAt < this.table.heap.dueOf(claim)) this.table.heap.update(claim, claim.expiresAt);
  }

  /** replicaRenew for a resumable claim (holder or waiter) named by its id alone (the coalesced renewals). */
  replicaRenewResumable(claimId: number, remainingMs: number): void {
    const claim = this.table.resumable.get(claimId);
    if (claim !== undefined) this.replicaRenew(claim.name, claimId, remainingMs);
  }

  /**
   * At a promotion: the replicated resumable session claims (holders and waiters) stay, now
   * owned by `owner` (a detached owner that counts how they end), each with the lease it had
   * when this node last heard of it renewed, but at most the detach limits' maxMs from now and
   * at most maxClaims of them (limitDetached). Waiters are filed in the heap so that an unclaimed
   * one leaves the queue at its lease end like a silent session. Returns how many were kept.
   */
  keepDetached(owner: ClaimOwner): number {
    let kept = 0;
    const now = this.clock.now();
    for (const claim of this.table.resumable.values()) {
      if (claim.owner !== DETACHED_OWNER || claim.state === 'ended') continue;
      // This node's own detach limits, as for a reset on it: a failover bypasses neither. Past
      // maxClaims (oldest claims first) the rest stay DETACHED_OWNER's, and the caller ends them.
      if (owner.awaitingResume === true && !this.table.roomToDetach()) continue;
      claim.owner = owner;
      kept++;
      if (owner.awaitingResume === true) this.table.fileDetached(claim, now);
      if (claim.state === 'waiting') {
        this.table.heap.update(claim, Math.min(claim.waitDeadline, claim.expiresAt));
      }
      // Readers (the dashboard) show it as waiting for its client from now on.
      if (this.table.listeners.length > 0)
        this.table.emit({ type: 'detach', at: this.clock.now(), lock: claim.lock.name, claimId: claim.id, protocol: claim.protocol });
    }
    return kept;
  }

  /**
   * Forgets every claim: each ends silently (no owner is called back, no per-lock event), so a
   * connection that still holds one finds it ended and its later end() is a no-op. Listeners get
   * one 'reset' event: re-read everything. Claim ids and tokens carry on; they never go back.
   * `expectedLocks`: how many locks a snapshot is bringing (the table is split for them: lock-map.ts).
   */
  reset(expectedLocks = 0): void {
    const ended: EndedHolder[] = [];
    const now = this.clock.now();
    const listening = this.table.listeners.length > 0;
    const compact = this.table.compact;
    for (const lock of this.table.locks.values()) {
      if (typeof lock === 'number') {
        // Ended by the columns' clear below (a HeldView reads its state from them).
        if (listening && compact.idOf(lock) !== 0) ended.push(compact.endedHolder(lock, now));
        continue;
      }
      if (lock.holder !== null) {
        if (listening) ended.push(endedHolder(lock.holder, now));
        lock.holder.state = 'ended';
        lock.holder = null;
      }
      for (let c = lock.head; c !== null; c = c.next) c.state = 'ended';
    }
    // Every claim filed in the heap is one of those: out in one pass, not one sift each.
    this.table.heap.clear();
    this.table.unfileAll(expectedLocks);
    this.table.resumable.clear();
    this.table.renewals = [];
    this.table.detachedNow = 0;
    this.table.held = 0;
    this.table.queued = 0;
    if (listening) this.table.emit({ type: 'reset', at: now, ended });
  }

  /**
   * Forgets what this node has of `name`, silently as reset() does: a snapshot part brings the
   * active's whole state of that lock (the events seen before it may have left part of it).
   */
  replicaClearLock(name: string): void {
    const entry = this.table.locks.get(name);
    if (typeof entry === 'number') {
      // A compact lock: its row goes, held or parked, silently.
      this.table.unfileCompact(entry);
      return;
    }
    const lock = entry;
    if (lock === undefined) return;
    if (lock.holder !== null) this.table.endHolder(lock, lock.holder, this.clock.now(), 'release');
    while (lock.head !== null) this.table.leaveQueue(lock.head, false);
    this.table.unfile(lock);
  }

  /** Listeners re-read everything: a snapshot that came part by part (installed silently) is complete. */
  replicaAnnounceReset(): void {
    if (this.table.listeners.length > 0) this.table.emit({ type: 'reset', at: this.clock.now(), ended: [] });
  }

  /** Claims created here later (after a promotion) must not reuse the active's ids. */
  private claimIdSeen(claimId: number): void {
    if (claimId >= this.table.nextClaimId) this.table.nextClaimId = claimId + 1;
  }
}

/** The waiter with `claimId` in `lock`'s queue; the head first, since grants usually take it. */
function findWaiter(lock: LockState, claimId: number): Claim | null {
  let c = lock.head;
  while (c !== null && c.id !== claimId) c = c.next;
  return c;
}
