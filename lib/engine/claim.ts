// A claim is one request for a lock: first a waiter in the lock's FIFO queue, then its holder,
// then ended. One object per request; the engine links it into its lock's queue and into the
// deadline heap directly (intrusive links), so queue moves and removals allocate nothing but a
// claim's WaitLinks at its first wait. Its lock (lock-state.ts) is exported from here too, as
// the rest of the tree has always imported both from this module.
import type { HeapItem } from './deadline-heap.ts';
import { WaitLinks } from './lock-queue.ts';
import type { LockState } from './lock-state.ts';

export type Protocol = 'keyed' | 'session';
export type ClaimState = 'waiting' | 'holding' | 'ended';

/** Why the engine (not the owner) ended a claim. */
export type EndReason = 'wait-timeout' | 'expired' | 'force-released' | 'kicked';

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

/** Rare fields of a claim, in one object made only for the claims that have one. */
class ClaimExtra {
  keyHash: string | null = null;
  clientName: string | null = null;
  tag = 0;
}

// Claim.bits: the state, the protocol and the yes/no fields in one small integer (one field of
// 8 bytes instead of four).
const STATE_MASK = 3;
const WAITING = 0;
const HOLDING = 1;
const ENDED = 2;
const SESSION = 4;
const SLIDING = 8;
const RENEW_QUEUED = 16;
const GRANTED = 32;
const STATE_NAMES: readonly ClaimState[] = ['waiting', 'holding', 'ended'];

/**
 * Only fields that every claim needs are fields of its own (issue 29: every tagged field is 8
 * bytes and every time a 16-byte box on Node 20): the queue's fields are in WaitLinks, made
 * when the claim first waits; the rare ones (claim-key hash, client name, tag) in ClaimExtra.
 * The rest of the tree reads them as before, through accessors V8 inlines.
 */
export class Claim implements HeapItem {
  due = Number.POSITIVE_INFINITY;
  heapIndex = -1;
  token = 0n;
  /** Lease end: grant + lease (fixed), or last sign of life + lease (sliding). */
  expiresAt = Number.POSITIVE_INFINITY;
  /** When it asked until it is granted, then when it was granted (the ask time is in `links` if they differ). */
  private at: number;
  private bits: number;
  /** The queue's fields (lock-queue.ts), from the claim's first wait on; null for a claim granted at once. Engine-internal. */
  links: WaitLinks | null = null;
  private extra: ClaimExtra | null = null;

  constructor(
    readonly id: number,
    readonly lock: LockState,
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
    this.at = enqueuedAt;
    this.bits = (protocol === 'session' ? SESSION : 0) | (sliding ? SLIDING : 0);
    if (tag !== 0) this.extraFields().tag = tag;
  }

  get name(): string {
    return this.lock.name;
  }

  get state(): ClaimState {
    return STATE_NAMES[this.bits & STATE_MASK] as ClaimState;
  }

  set state(state: ClaimState) {
    this.bits = (this.bits & ~STATE_MASK) | (state === 'waiting' ? WAITING : state === 'holding' ? HOLDING : ENDED);
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

  /** Enqueue order within the lock, for queue positions. */
  get seq(): number {
    return this.links === null ? 0 : this.links.seq;
  }

  /** The waiter ahead in the queue, and the one behind; null when none (or not waiting). */
  get prev(): Claim | null {
    return this.links === null ? null : this.links.prev;
  }

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
  waitLinks(): WaitLinks {
    if (this.links === null) this.links = new WaitLinks(this.at);
    return this.links;
  }

  private extraFields(): ClaimExtra {
    if (this.extra === null) this.extra = new ClaimExtra();
    return this.extra;
  }
}

export { LockState } from './lock-state.ts';
export type HandoverCause = 'release' | 'disconnect' | 'expiry' | 'force-release';
