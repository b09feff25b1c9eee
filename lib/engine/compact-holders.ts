// Compact holders (issue 29, stage 2): a keyed lock held with nobody waiting, the common case
// at millions of locks, is a row of columns indexed by a slot number, not a LockState and a
// Claim. The lock table maps its name to the slot (lock-table.ts: a number in the map instead of
// a LockState); its holder's fields are typed arrays (ids, tokens, times, lease) and plain arrays
// of references that many rows share (owner, client address, client name), and its deadline is
// in a lane per lease length (slot-deadlines.ts). The garbage collector walks no object per such lock.
//
// A compact holder is any keyed claim granted at once with a fixed lease and no tag or claim
// key. It turns into the object form (a LockState with a Claim) as soon as anything needs
// objects: a waiter, a shut grant gate, an admin action, a standby's replica operation
// (LockTable.objectForm). Readers (engine.lock(), allLocks()) get a fresh LockState and
// HeldView made from the row: the same fields, but not the same object twice, so compare
// claims by id. A HeldView reads its state live from the row it came from (and, once the lock
// took the object form, from its holder), so a connection that keeps one until its reply is
// written sees when it ended; the values it was made with are its own, so a slot reused by
// another lock changes nothing it reports.
import { Claim, type ClaimOwner, type ClaimState, LockState } from './claim.ts';
import type { LockMap } from './lock-map.ts';
import { ClaimOrigins } from './claim-origins.ts';
import type { EndedHolder, ReleaseEvent } from './events.ts';
import { SlotDeadlines } from './slot-deadlines.ts';
import { grownFloat, grownInt } from './slot-heap.ts';

/** What the table maps a name to: the object form, or a compact slot. */
export type TableEntry = LockState | number;

export class CompactHolders {
  /** The lock's name, while the slot is held or parked; null when free. */
  names: (string | null)[] = [];
  /** The holder's claim id; 0 while nobody holds the slot's lock. */
  ids = new Float64Array(64);
  tokens = new BigUint64Array(64);
  grantedAt = new Float64Array(64);
  leaseMs = new Float64Array(64);
  /** The holder's owner, address and client name, as an entry of `origins` (claim-origins.ts). */
  origin = new Int32Array(64);
  readonly origins = new ClaimOrigins();
  /** Where the slot is among the parked locks (parked-locks.ts), -1 when not parked. */
  parkPos = new Int32Array(64).fill(-1);
  /** The held slots' lease ends. */
  deadlines = new SlotDeadlines();
  private free: number[] = [];
  /** Slots handed out so far (the rest of the columns is room). */
  private top = 0;
  /** Rows the table is expected to reach (reserve). */
  private expected = 0;

  constructor(private readonly locks: Pick<LockMap<TableEntry>, 'get'>) {}

  /** A free slot for `name`, its holder fields not yet set. */
  alloc(name: string): number {
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.top++;
    if (slot >= this.ids.length) this.grow(Math.max(2 * this.ids.length, this.expected));
    this.parkPos[slot] = -1;
    this.names[slot] = name;
    return slot;
  }

  /**
   * The slot holds from now on: the holder's fields, and its lease end filed (grant +
   * lease, as Handovers.grant computes a fixed lease's end, so both forms agree to the bit; a
   * replicated grant gives the end the active reported).
   */
  hold(
    slot: number,
    id: number,
    token: bigint,
    at: number,
    leaseMs: number,
    owner: ClaimOwner,
    client: string,
    clientName: string | null,
    expiresAt = at + leaseMs,
  ): void {
    this.ids[slot] = id;
    this.tokens[slot] = token;
    this.grantedAt[slot] = at;
    this.leaseMs[slot] = leaseMs;
    this.origin[slot] = this.origins.take(owner, client, clientName);
    this.deadlines.push(slot, expiresAt, leaseMs);
  }

  /** The lease end of a held slot: its deadline filed (a compact holder's lease never moves). */
  expiresAt(slot: number): number {
    return this.deadlines.dueOf(slot);
  }

  /** The holder is gone; the name stays (the caller parks the slot or frees it). */
  unhold(slot: number): void {
    this.ids[slot] = 0;
    this.origins.drop(this.origin[slot] as number);
    this.deadlines.remove(slot);
  }

  /** The slot's lock leaves the table (pushed out of the parked ones, or turned into objects). */
  release(slot: number): void {
    if (this.ids[slot] !== 0) this.unhold(slot);
    this.names[slot] = null;
    this.free.push(slot);
  }

  /** Forgets every slot at once: new columns, no pass over the old ones (a reset). */
  clear(): void {
    this.names = [];
    this.origins.clear();
    this.free = [];
    this.top = 0;
    this.grow(64, true);
    this.deadlines.clear();
  }

  /** The held slot's holder as a Claim (a fresh object each call); `token`: its token, if the caller has it. */
  view(slot: number, token = this.tokens[slot] as bigint): HeldView {
    const o = this.origin[slot] as number;
    const origins = this.origins;
    return new HeldView(
      this,
      slot,
      this.ids[slot] as number,
      this.names[slot] as string,
      origins.owners[o] as ClaimOwner,
      origins.clients[o] as string,
      origins.clientNames[o] as string | null,
      this.leaseMs[slot] as number,
      this.grantedAt[slot] as number,
      this.expiresAt(slot),
      token,
    );
  }

  /** The lock of a slot as readers see it: a LockState with the holder's view (or none between its holders). */
  lockView(slot: number): LockState {
    if (this.ids[slot] === 0) return new LockState(this.names[slot] as string);
    return this.view(slot).lock;
  }

  /**
   * Rows the table is expected to reach (a standby told the size of the table coming; 0 when not
   * known): the columns double as they fill, and each doubling copies every column in one call,
   * about 200 MB at 4 M rows, so the first growth goes straight to this many instead.
   */
  reserve(slots: number): void {
    this.expected = slots;
    this.deadlines.reserve(slots);
  }

  /** A view's state now: its row while it holds there, else what became of its claim. */
  stateOf(v: HeldView): ClaimState {
    if (v.slot < this.ids.length && this.ids[v.slot] === v.id) return 'holding';
    const entry = this.locks.get(v.name);
    if (entry === undefined || typeof entry === 'number') return 'ended';
    return entry.holder !== null && entry.holder.id === v.id ? entry.holder.state : 'ended';
  }

  /** What an end event says of a held slot's holder (end-events.ts: endedHolder). */
  endedHolder(slot: number, at: number): EndedHolder {
    return {
      at,
      lock: this.names[slot] as string,
      claimId: this.ids[slot] as number,
      token: this.tokens[slot] as bigint,
      protocol: 'keyed',
      client: this.clientOf(slot),
      clientName: this.clientNameOf(slot),
      grantedAt: this.grantedAt[slot] as number,
      waitedMs: 0,
    };
  }

  /** The release event of a held slot (as end-events.ts builds it from a Claim); `token` is the slot's. */
  releaseEvent(slot: number, at: number, cause: ReleaseEvent['cause'], token: bigint): ReleaseEvent {
    return {
      type: 'release',
      at,
      lock: this.names[slot] as string,
      claimId: this.ids[slot] as number,
      token,
      protocol: 'keyed',
      client: this.clientOf(slot),
      clientName: this.clientNameOf(slot),
      grantedAt: this.grantedAt[slot] as number,
      waitedMs: 0,
      cause,
    };
  }

  clientOf(slot: number): string {
    return this.origins.clients[this.origin[slot] as number] as string;
  }

  clientNameOf(slot: number): string | null {
    return this.origins.clientNames[this.origin[slot] as number] as string | null;
  }

  ownerOf(slot: number): ClaimOwner {
    return this.origins.owners[this.origin[slot] as number] as ClaimOwner;
  }

  private grow(size: number, fresh = false): void {
    const keep = !fresh;
    this.ids = keep ? grownFloat(this.ids, size) : new Float64Array(size);
    this.grantedAt = keep ? grownFloat(this.grantedAt, size) : new Float64Array(size);
    this.leaseMs = keep ? grownFloat(this.leaseMs, size) : new Float64Array(size);
    // Not filled with -1 past the old length (alloc() sets each slot's): a standby's one growth to
    // millions would write the whole column in one call.
    this.parkPos = keep ? grownInt(this.parkPos, size, 0) : new Int32Array(size).fill(-1);
    this.origin = keep ? grownInt(this.origin, size, 0) : new Int32Array(size);
    const tokens = new BigUint64Array(size);
    if (keep) tokens.set(this.tokens);
    this.tokens = tokens;
  }
}

/**
 * A compact holder read as a Claim (CompactHolders.view). Its values are copied from the row when
 * it is made; its state is read live. The engine takes it back (end) by lock name and claim id.
 */
export class HeldView extends Claim {
  private readonly lockName: string;

  constructor(
    private readonly holders: CompactHolders,
    readonly slot: number,
    id: number,
    name: string,
    owner: ClaimOwner,
    client: string,
    clientName: string | null,
    leaseMs: number,
    at: number,
    expiresAt: number,
    token: bigint,
  ) {
    super(id, null, owner, 'keyed', client, leaseMs, false, at, 0);
    this.lockName = name;
    this.token = token;
    this.grantedAsAsked();
    this.expiresAt = expiresAt;
    if (clientName !== null) this.clientName = clientName;
  }

  override get name(): string {
    return this.lockName;
  }

  /** A LockState made on first use, holding this view (readers that walk from a claim to its lock). */
  override get lock(): LockState {
    if (this.home === null) {
      const lock = new LockState(this.lockName);
      lock.holder = this;
      this.home = lock;
    }
    return this.home;
  }

  override get state(): ClaimState {
    return this.holders.stateOf(this);
  }

  override set state(_state: ClaimState) {
    throw new Error('a HeldView is read-only: the engine changes the row it came from');
  }

  override get isView(): boolean {
    return true;
  }
}
