// A claim is one request for a lock: first a waiter in the lock's FIFO queue, then its holder,
// then ended. One object per request; the engine links it into its lock's queue and into the
// deadline heap directly (intrusive links), so queue moves and removals allocate nothing but a
// claim's WaitLinks at its first wait. A claim and its lock point at each other, so both live in
// this one module (no import cycle); the parts kept apart are in claim-parts.ts and lock-queue.ts.
import type { HeapItem } from './deadline-heap.ts';
import type { ClaimState, EndReason, HandoverCause, Protocol } from './claim-parts.ts';
import { ClaimExtra, GRANTED, RENEW_QUEUED, SESSION, SLIDING, STATE_MASK, STATE_NAMES, WaitLinks } from './claim-parts.ts';
import { LockQueue } from './lock-queue.ts';

export type { ClaimState, EndReason, HandoverCause, Protocol } from './claim-parts.ts';

/**
 * The connection (or in-process caller) a claim belongs to. One object per connection, not a
 * closure per request.
 */
export interface ClaimOwner {
  /**
   * The claim now holds its lock. Return false when the grant cannot be delivered (the
   * connection is gone): the engine then releases it at once and hands the lock on.
   */
  onGranted(claim: Claim): boolean;
  /** The engine ended the claim for `reason`; not called for ends the owner asked for. */
  onEnded(claim: Claim, reason: EndReason): void;
  /**
   * Set on owners that stand for no connection (a replicated claim, a session claim between
   * connections): a resumable claim with such an owner may be taken up by RESUME (lock-engine.ts).
   */
  readonly detached?: true;
  /** Set on the owner of claims kept for their clients to come back (not a standby's mirror): for operators, "reconnecting". */
  readonly awaitingResume?: true;
  /** A detached claim of this owner was taken up by a connection again. */
  onResumed?(claim: Claim): void;
}

/**
 * One call of LockEngine.acquire, by name rather than by position. The engine reads it during the
 * call and keeps nothing of it (the claim gets its own fields), so a caller on a hot path may
 * fill one object per connection and pass it again for every request.
 */
export interface AcquireRequest {
  /** The lock's name. */
  readonly name: string;
  /** Who hears of the grant and of ends the owner did not ask for. */
  readonly owner: ClaimOwner;
  readonly protocol: Protocol;
  /** Peer address, for operators ("127.0.0.1:53122"). */
  readonly client: string;
  /** The name the client gave itself (keyed `I`, session `CLIENT`), for operators; null or absent: none. */
  readonly clientName?: string | null;
  /** Lease length; must be positive and finite. */
  readonly leaseMs: number;
  /** How long the claim may wait in the queue; 0 waits forever. */
  readonly waitMs: number;
  /** A sliding lease (sessions): every sign of life restarts it, queued or holding. */
  readonly sliding: boolean;
  /** Owner-defined number (Claim.tag); 0 if not given. */
  readonly tag?: number;
  /** SHA-256 (hex) of a session's claim key: the claim is resumable (LockEngine.resume). */
  readonly keyHash?: string | null;
}

/** Its queue's fields and rare ones live apart (claim-parts.ts); all are read as before, through accessors V8 inlines. */
export class Claim implements HeapItem {
  heapIndex = -1;
  token = 0n;
  /** When it asked until it is granted, then when it was granted (the ask time is in `links` if they differ). */
  private at: number;
  private bits: number;
  /** The queue's fields (lock-queue.ts), from the claim's first wait on; null for a claim granted at once. Engine-internal. */
  links: WaitLinks<Claim> | null = null;
  private extra: ClaimExtra | null = null;
  /** The lease end if not grant + lease (sliding, replicated, cut short), else null: tagged, so a fixed lease has no box. */
  expiresAt = Number.POSITIVE_INFINITY;

  /** Its lock; made on first use for a HeldView (compact-holders.ts), always set for the engine's own claims. */
  protected home: LockState | null;

  constructor(
    readonly id: number,
    home: LockState | null,
    /** Changes only for a resumable claim: detached from its connection, or taken up by another. */
    public owner: ClaimOwner,
    protocol: Protocol,
    /** Peer address, for operators ("127.0.0.1:53122"). */
    readonly client: string,
    readonly leaseMs: number,
    sliding: boolean,
    enqueuedAt: number,
    /** Owner-defined number (e.g. the request's sequence on its connection). */
    tag: number,
  ) {
    this.home = home;
    this.at = enqueuedAt;
    this.bits = (protocol === 'session' ? SESSION : 0) | (sliding ? SLIDING : 0);
    if (tag !== 0) this.extraFields().tag = tag;
  }

  get lock(): LockState {
    return this.home as LockState;
  }

  get name(): string {
    return this.lock.name;
  }

  /**
   * A compact holder read as a claim (compact-holders.ts: HeldView), not the engine's own
   * object: the engine takes it back by lock name and claim id.
   */
  get isView(): boolean {
    return false;
  }

  get state(): ClaimState {
    return STATE_NAMES[this.bits & STATE_MASK] as ClaimState;
  }

  set state(state: ClaimState) {
    this.bits = (this.bits & ~STATE_MASK) | (state === 'waiting' ? 0 : state === 'holding' ? 1 : 2);
  }

  get protocol(): Protocol {
    return (this.bits & SESSION) !== 0 ? 'session' : 'keyed';
  }

  get sliding(): boolean {
    return (this.bits & SLIDING) !== 0;
  }

  /** Already in the engine's list of renewals to replicate (see LockEngine.takeRenewals). */
  get renewQueued(): boolean {
    return (this.bits & RENEW_QUEUED) !== 0;
  }

  set renewQueued(on: boolean) {
    this.bits = on ? this.bits | RENEW_QUEUED : this.bits & ~RENEW_QUEUED;
  }

  /** Granted when it asked (no wait): the grant time is the ask time it was made with. */
  protected grantedAsAsked(): void {
    this.bits |= GRANTED;
  }

  /** When it was granted; 0 until then. */
  get grantedAt(): number {
    return (this.bits & GRANTED) !== 0 ? this.at : 0;
  }

  set grantedAt(at: number) {
    // The ask time moves to the links if it differs (a claim granted at once asked when granted).
    if (this.links === null && (this.bits & GRANTED) === 0 && at !== this.at) this.links = new WaitLinks(this.at);
    this.at = at;
    this.bits |= GRANTED;
  }

  get enqueuedAt(): number {
    return this.links === null ? this.at : this.links.enqueuedAt;
  }

  /** Absolute wait deadline while queued; +Infinity waits forever. */
  get waitDeadline(): number {
    return this.links === null ? Number.POSITIVE_INFINITY : this.links.waitDeadline;
  }

  set waitDeadline(at: number) {
    this.waitLinks().waitDeadline = at;
  }

  /** The waiter behind this one in the queue; null when none (or not waiting). */
  get next(): Claim | null {
    return this.links === null ? null : this.links.next;
  }

  /**
   * SHA-256 (hex) of the claim key of a session that opted in to resuming, else null. Only the
   * hash is kept: the key is the client's credential and is never stored, logged or shown.
   */
  get keyHash(): string | null {
    return this.extra === null ? null : this.extra.keyHash;
  }

  set keyHash(hash: string | null) {
    if (hash !== null || this.extra !== null) this.extraFields().keyHash = hash;
  }

  /** The name the client gave itself ("worker-7@host-3 pid 4121"), or null; set once, at acquire. */
  get clientName(): string | null {
    return this.extra === null ? null : this.extra.clientName;
  }

  set clientName(name: string | null) {
    if (name !== null || this.extra !== null) this.extraFields().clientName = name;
  }

  /** Owner-defined number (e.g. the request's sequence on its connection); 0 if not given. */
  get tag(): number {
    return this.extra === null ? 0 : this.extra.tag;
  }

  /** The claim's queue fields, made on first use (engine-internal). */
  waitLinks(): WaitLinks<Claim> {
    if (this.links === null) this.links = new WaitLinks(this.at);
    return this.links;
  }

  private extraFields(): ClaimExtra {
    if (this.extra === null) this.extra = new ClaimExtra();
    return this.extra;
  }
}

// One named lock: its holder and, while anyone waits, its FIFO queue (lock-queue.ts). A lock held
// with nobody waiting is this object alone: name, holder, and one small integer for whether it is
// filed and where it is parked (parked-locks.ts).
const FILED = 1;

export class LockState {
  holder: Claim | null = null;
  /** The waiters, while there are any; null otherwise (most held locks). */
  private q: LockQueue<Claim> | null = null;
  /** FILED, and the parked slot + 1 above it (0: not parked). */
  private bits = 0;

  constructor(readonly name: string) {}

  get idle(): boolean {
    return this.holder === null && this.q === null;
  }

  /** The first waiter, next in line; null when nobody waits. */
  get head(): Claim | null {
    return this.q === null ? null : this.q.head;
  }

  get tail(): Claim | null {
    return this.q === null ? null : this.q.tail;
  }

  get waiting(): number {
    return this.q === null ? 0 : this.q.waiting;
  }

  /** In the engine's table under its name (lock-table.ts); false once dropped or replaced. */
  get filed(): boolean {
    return (this.bits & FILED) !== 0;
  }

  set filed(on: boolean) {
    this.bits = on ? this.bits | FILED : this.bits & ~FILED;
  }

  /** Idle and kept in the table for its next claim (lock-table.ts: parked locks). */
  get parked(): boolean {
    return this.bits > FILED;
  }

  /** Its slot among the parked locks, -1 when not parked (parked-locks.ts). Engine-internal. */
  get parkSlot(): number {
    return (this.bits >> 1) - 1;
  }

  set parkSlot(slot: number) {
    this.bits = (this.bits & FILED) | ((slot + 1) << 1);
  }
  /** When the last holder ended, for the handover latency of the next grant (0: none since it was last idle). */
  get endedAt(): number {
    return this.q === null ? 0 : this.q.endedAt;
  }

  get endCause(): HandoverCause {
    return this.q === null ? 'release' : this.q.endCause;
  }

  /** The holder ended: kept only while someone waits (only a waiter's grant is a handover; an idle lock is parked afresh). */
  noteEnd(at: number, cause: HandoverCause): void {
    if (this.q === null) return;
    this.q.endedAt = at;
    this.q.endCause = cause;
  }

  enqueue(claim: Claim): void {
    if (this.q === null) this.q = new LockQueue();
    this.q.enqueue(claim, claim.waitLinks());
  }

  /** Unlinks a waiter from anywhere in the queue. */
  unlink(claim: Claim): void {
    if (this.q !== null && claim.links !== null && this.q.unlink(claim, claim.links)) this.q = null;
  }

  /** Bookkeeping size for the position index (bounded by the number of waiters plus a constant). */
  get holeCount(): number {
    return this.q === null ? 0 : this.q.holeCount;
  }

  /** 1 = next in line. */
  positionOf(claim: Claim): number {
    return this.q === null || claim.links === null ? 0 : this.q.positionOf(claim.links);
  }

  /** Waiters in FIFO order (for operators; O(n)). */
  queue(): Claim[] {
    const out: Claim[] = [];
    for (let c = this.head; c !== null; c = c.next) out.push(c);
    return out;
  }
}
