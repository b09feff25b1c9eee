// Serving operations, a part of the engine (lock-engine.ts): what clients and admins ask of a
// serving node (acquire, release, end, touch, heartbeat, detach, resume, force-release, kick).
// Each reads and changes the shared lock table (lock-table.ts), asks the grant gate
// (grant-gate.ts) whether it may grant now and for the token, and leaves the grant, the handover
// to the next waiter and the deadlines to the handovers (handovers.ts).
//
// acquire and release are the hot path: every part they use is a field set once in the
// constructor, and no call makes a closure or an object but the Claim acquire returns and, with
// listeners, the events.
import { type AcquireRequest, Claim, type ClaimOwner, type ClaimState } from './claim.ts';
import { HeldView } from './compact-holders.ts';
import type { Clock } from './clock.ts';
import { forceReleaseEvent } from './end-events.ts';
import type { GrantGate } from './grant-gate.ts';
import type { Handovers } from './handovers.ts';
import { type LockTable, NEVER } from './lock-table.ts';
import { PAGE_MASK } from './paged-columns.ts';

export type ForceReleaseResult = { ok: true; token: bigint; claim: Claim } | { ok: false; reason: 'not-held' | 'stale-token'; holderToken: bigint | null };

export class ServingOps {
  constructor(
    private readonly table: LockTable,
    private readonly gate: GrantGate,
    private readonly handovers: Handovers,
    private readonly clock: Clock,
  ) {}

  /**
   * Asks for `request.name`. The claim is granted now (owner.onGranted is called before this
   * returns) or queued at the tail. Sliding claims (sessions) must be touched within `leaseMs`
   * while queued too, or they leave the queue as dead. A `keyHash` makes the claim resumable:
   * see resume().
   */
  acquire(request: AcquireRequest): Claim {
    const { name, owner, protocol, client, leaseMs, waitMs, sliding } = request;
    if (!(leaseMs > 0 && leaseMs < NEVER) || !(waitMs >= 0)) throw new RangeError(`bad lease ${leaseMs} or wait ${waitMs}`);
    const now = this.handovers.catchUp();
    const open = this.gate.isOpenAt(now);
    const entry = this.table.locks.get(name);
    const compact = this.table.compact;
    // A slot that holds is taken (only its holder's fields are in it).
    const idle = entry === undefined || (typeof entry === 'number' ? compact.page(entry).ids[entry & PAGE_MASK] === 0 : entry.idle);
    // A token before any change: if none can be issued, the engine is left as it was and the
    // caller gets the TokensUnavailable (its client an error naming why).
    const token = open && idle ? this.gate.issue() : 0n;
    if (open && idle && typeof entry !== 'object' && !sliding && protocol === 'keyed' && this.table.compactOn) {
      // The common case at scale: a keyed claim granted at once on a lock nobody else wants.
      if ((request.tag ?? 0) === 0 && (request.keyHash ?? null) === null && owner.awaitingResume !== true) {
        return this.grantCompact(entry, request, token, now);
      }
    }
    const lock = entry === undefined ? this.table.addLock(name) : typeof entry === 'number' ? this.table.objectForm(entry) : entry;
    if (lock.parked) this.table.unpark(lock);
    const claim = new Claim(this.table.nextClaimId++, lock, owner, protocol, client, leaseMs, sliding, now, request.tag ?? 0);
    claim.clientName = request.clientName ?? null;
    if (sliding) claim.expiresAt = now + leaseMs;
    const keyHash = request.keyHash ?? null;
    if (keyHash !== null) {
      claim.keyHash = keyHash;
      this.table.addResumable(claim);
    }
    if (open && lock.idle) {
      this.handovers.grant(lock, claim, now, null, token);
      // The owner may have ended the claim itself inside onGranted; then it is already handed on.
      if (!owner.onGranted(claim) && claim.state === 'holding') {
        this.handovers.dropHolder(lock, claim, now, 'disconnect');
        this.handovers.handOver(lock, now);
      }
      return claim;
    }
    claim.waitDeadline = waitMs > 0 ? now + waitMs : NEVER;
    // A free lock behind a shut gate: the request waits, and is granted when the gate opens.
    if (lock.holder === null && lock.head === null) this.gate.fileHeld(lock);
    lock.enqueue(claim);
    this.table.queued++;
    const due = Math.min(claim.waitDeadline, sliding ? claim.expiresAt : NEVER);
    if (due !== NEVER) this.table.heap.push(claim, due);
    if (this.table.listeners.length > 0) {
      this.table.emit({
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

  /** acquire() of a keyed claim on a free lock, in the compact form: a row of columns, no objects kept. */
  private grantCompact(entry: number | undefined, request: AcquireRequest, token: bigint, now: number): Claim {
    const table = this.table;
    const compact = table.compact;
    let slot: number;
    if (entry === undefined) slot = table.addCompact(request.name);
    else {
      slot = entry;
      if ((compact.page(slot).parkPos[slot & PAGE_MASK] as number) >= 0) table.unparkCompact(slot);
    }
    const { owner, client, leaseMs } = request;
    // The name the table keeps (a parked slot's, the same string each time: readers key on it).
    const name = compact.page(slot).names[slot & PAGE_MASK] as string;
    const clientName = request.clientName ?? null;
    const id = table.nextClaimId++;
    compact.hold(slot, id, token, now, leaseMs, owner, client, clientName);
    table.held++;
    if (table.listeners.length > 0) {
      // The same fields, in the same order, as Handovers.grant's event.
      table.emit({
        type: 'grant',
        at: now,
        lock: name,
        claimId: id,
        token,
        protocol: 'keyed',
        client,
        clientName,
        leaseMs,
        sliding: false,
        waitedMs: 0,
        handoverMs: null,
        handoverCause: null,
      });
    }
    const view = new HeldView(compact, slot, id, name, owner, client, clientName, leaseMs, now, now + leaseMs, token);
    // Undeliverable: released at once (unless the owner ended it inside onGranted already).
    if (!owner.onGranted(view) && compact.page(slot).ids[slot & PAGE_MASK] === id) this.handovers.endCompact(slot, now, 'disconnect', token);
    return view;
  }

  /**
   * Releases the keyed grant that `token` names. 'stale' when that token no longer holds `name`;
   * 'session-claim' when it is held by a session: a session's owner is its connection, the only
   * one that may end it (by closing), so a release by token would end it without its owner
   * knowing. Nothing changes in either case.
   */
  release(name: string, token: bigint): 'ok' | 'stale' | 'session-claim' {
    const now = this.handovers.catchUp();
    const lock = this.table.locks.get(name);
    if (typeof lock === 'number') {
      const compact = this.table.compact;
      const page = compact.page(lock);
      const r = lock & PAGE_MASK;
      if (page.ids[r] === 0 || page.tokens[r] !== token) return 'stale';
      this.handovers.endCompact(lock, now, 'release', token);
      return 'ok';
    }
    const holder = lock?.holder;
    if (lock === undefined || !holder || holder.token !== token) return 'stale';
    if (holder.protocol === 'session') return 'session-claim';
    this.handovers.dropHolder(lock, holder, now, 'release');
    this.handovers.handOver(lock, now);
    return 'ok';
  }

  /** The owner is gone (connection closed): a holder releases, a waiter leaves the queue. */
  end(view: Claim): void {
    // A compact holder read as a claim: its row if it still holds there, else its lock's holder.
    const claim = view.isView ? this.resolve(view) : view;
    if (claim === null || claim.state === 'ended') return;
    const now = this.clock.now();
    if (claim.state === 'holding') {
      this.handovers.dropHolder(claim.lock, claim, now, 'disconnect');
      this.handovers.handOver(claim.lock, now);
    } else {
      this.table.leaveQueue(claim);
      if (this.table.listeners.length > 0) {
        this.table.emit({ type: 'leave-queue', at: now, lock: claim.name, claimId: claim.id, protocol: claim.protocol, reason: 'disconnect' });
      }
    }
  }

  /** The claim a HeldView stands for now: ended (null, or ended itself), its row (ended here), or the object form's holder. */
  private resolve(view: Claim): Claim | null {
    const entry = this.table.locks.get(view.name);
    if (typeof entry === 'number') {
      if (this.table.compact.idOf(entry) === view.id) this.handovers.endCompact(entry, this.clock.now(), 'disconnect', view.token);
      return null;
    }
    return entry !== undefined && entry.holder !== null && entry.holder.id === view.id ? entry.holder : null;
  }

  /** A sign of life from a sliding claim's client: its lease restarts. */
  touch(claim: Claim): void {
    const now = this.clock.now();
    // A lease that has already lapsed stays lapsed, even if advance() has not got round to it yet.
    if (claim.sliding && claim.state !== 'ended' && claim.expiresAt > now) {
      claim.expiresAt = now + claim.leaseMs;
      if (claim.keyHash !== null) this.table.noteRenewal(claim);
    }
  }

  /**
   * A heartbeat from a sliding claim's client (the session's answer to it follows from the
   * state returned). A lease that lapsed before the heartbeat came ends now, as advance() will
   * when its timer fires: a late ACQUIRED would confirm ownership the server has already taken
   * back. The lease itself is restarted by touch(), on any input, before the heartbeat is read.
   */
  heartbeat(claim: Claim): ClaimState {
    if (claim.state !== 'ended' && claim.expiresAt <= this.clock.now()) this.handovers.advance();
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
    if (owner.awaitingResume === true && !this.table.roomToDetach()) return false;
    const now = this.clock.now();
    claim.owner = owner;
    if (owner.awaitingResume === true) this.table.fileDetached(claim, now);
    if (this.table.listeners.length > 0) this.table.emit({ type: 'detach', at: now, lock: claim.lock.name, claimId: claim.id, protocol: claim.protocol });
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
    this.handovers.catchUp();
    const lock = this.table.locks.get(name);
    // A compact lock has no resumable claim (compact-holders.ts).
    if (lock === undefined || typeof lock === 'number') return null;
    let claim = lock.holder;
    if (claim === null || claim.keyHash !== keyHash || claim.owner.detached !== true) {
      claim = lock.head;
      while (claim !== null && (claim.keyHash !== keyHash || claim.owner.detached !== true)) claim = claim.next;
    }
    if (claim === null) return null;
    const now = this.clock.now();
    if (!(claim.expiresAt > now)) {
      this.handovers.advance();
      return null;
    }
    const was = claim.owner;
    if (was.awaitingResume === true) this.table.detachedNow--;
    claim.owner = owner;
    claim.expiresAt = now + claim.leaseMs;
    this.table.noteRenewal(claim);
    was.onResumed?.(claim);
    if (this.table.listeners.length > 0) this.table.emit({ type: 'resume', at: now, lock: claim.lock.name, claimId: claim.id, protocol: claim.protocol });
    return claim;
  }

  /** Admin: ends the holder of `name` (only the one holding `token`, when given) and hands the lock on. */
  forceRelease(name: string, token?: bigint): ForceReleaseResult {
    this.handovers.catchUp();
    const lock = this.table.objectLock(name);
    const holder = lock?.holder ?? null;
    if (lock === undefined || holder === null) return { ok: false, reason: 'not-held', holderToken: null };
    if (token !== undefined && holder.token !== token) return { ok: false, reason: 'stale-token', holderToken: holder.token };
    const now = this.clock.now();
    this.table.endHolder(lock, holder, now, 'force-release');
    if (this.table.listeners.length > 0) {
      this.table.emit(forceReleaseEvent(holder, now));
    }
    holder.owner.onEnded(holder, 'force-released');
    this.handovers.handOver(lock, now);
    return { ok: true, token: holder.token, claim: holder };
  }

  /** Admin: removes waiter `claimId` from the queue of `name`. */
  kick(name: string, claimId: number): boolean {
    this.handovers.catchUp();
    const lock = this.table.locks.get(name);
    // A compact lock has nobody waiting.
    if (lock === undefined || typeof lock === 'number') return false;
    let claim = lock.head;
    while (claim !== null && claim.id !== claimId) claim = claim.next;
    if (claim === null) return false;
    const now = this.clock.now();
    this.table.leaveQueue(claim);
    if (this.table.listeners.length > 0) {
      this.table.emit({ type: 'kick', at: now, lock: name, claimId, protocol: claim.protocol, client: claim.client, waitedMs: now - claim.enqueuedAt });
    }
    claim.owner.onEnded(claim, 'kicked');
    return true;
  }
}
