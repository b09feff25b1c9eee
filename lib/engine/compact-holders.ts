// Compact holders (issue 29, stage 2): a keyed lock held with nobody waiting, the common case
// at millions of locks, is a row of columns indexed by a slot number, not a LockState and a
// Claim. The lock table maps its name to the slot (lock-table.ts: a number in the map instead of
// a LockState); its holder's fields are typed arrays (ids, tokens, times, lease) and plain arrays
// of references that many rows share (owner, client address, client name), and its deadline is
// in a lane per lease length (slot-deadlines.ts). The garbage collector walks no object per such lock.
// The columns are in pages of rows (holder-pages.ts): the table grows a page at a time and never
// copies a column, which at millions of rows blocked the loop for longer than the peer timeout.
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
import { type HolderPage, holderPages } from './holder-pages.ts';
import { PAGE_BITS, PAGE_MASK } from './paged-columns.ts';
import { SlotDeadlines } from './slot-deadlines.ts';

/** What the table maps a name to: the object form, or a compact slot. */
export type TableEntry = LockState | number;

export class CompactHolders {
  /** Each slot's row: name, holder fields, park position (holder-pages.ts). */
  private readonly rows = holderPages();
  /** The holders' owner, address and client name, shared by many rows (claim-origins.ts). */
  readonly origins = new ClaimOrigins();
  /** The held slots' lease ends. */
  readonly deadlines = new SlotDeadlines();
  private free: number[] = [];
  /** Slots handed out so far (the rest of the columns is room). */
  private top = 0;

  constructor(private readonly locks: Pick<LockMap<TableEntry>, 'get'>) {}

  /** Slots the columns have room for (a slot at or past it was never handed out). */
  get capacity(): number {
    return this.rows.capacity;
  }

  /** The holder's claim id; 0 while nobody holds the slot's lock. */
  idOf(slot: number): number {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).ids[slot & PAGE_MASK] as number;
  }

  tokenOf(slot: number): bigint {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).tokens[slot & PAGE_MASK] as bigint;
  }

  /** The lock's name, while the slot is held or parked; null when free. */
  nameOf(slot: number): string | null {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).names[slot & PAGE_MASK] as string | null;
  }

  /** Where the slot is among the parked locks (parked-locks.ts), -1 when not parked. */
  parkPosOf(slot: number): number {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).parkPos[slot & PAGE_MASK] as number;
  }

  /** A free slot for `name`, its holder fields not yet set. */
  alloc(name: string): number {
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.top++;
    // Room for one more page at most: no column is copied (past the first page's doublings).
    if (slot >= this.rows.capacity) this.rows.ensure(slot + 1);
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    page.parkPos[r] = -1;
    page.names[r] = name;
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
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    page.ids[r] = id;
    page.tokens[r] = token;
    page.grantedAt[r] = at;
    page.leaseMs[r] = leaseMs;
    page.origin[r] = this.origins.take(owner, client, clientName);
    this.deadlines.push(slot, expiresAt, leaseMs);
  }

  /** The lease end of a held slot: its deadline filed (a compact holder's lease never moves). */
  expiresAt(slot: number): number {
    return this.deadlines.dueOf(slot);
  }

  /** The holder is gone; the name stays (the caller parks the slot or frees it). */
  unhold(slot: number): void {
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    page.ids[r] = 0;
    this.origins.drop(page.origin[r] as number);
    this.deadlines.remove(slot);
  }

  /** The slot's lock leaves the table (pushed out of the parked ones, or turned into objects). */
  release(slot: number): void {
    if (this.idOf(slot) !== 0) this.unhold(slot);
    this.page(slot).names[slot & PAGE_MASK] = null;
    this.free.push(slot);
  }

  /** Forgets every slot at once: new columns, no pass over the old ones (a reset). */
  clear(): void {
    this.rows.reset();
    this.origins.clear();
    this.free = [];
    this.top = 0;
    this.deadlines.clear();
  }

  /** The held slot's holder as a Claim (a fresh object each call); `token`: its token, if the caller has it. */
  view(slot: number, token = this.tokenOf(slot)): HeldView {
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    const o = page.origin[r] as number;
    const origins = this.origins;
    return new HeldView(
      this,
      slot,
      page.ids[r] as number,
      page.names[r] as string,
      origins.owners[o] as ClaimOwner,
      origins.clients[o] as string,
      origins.clientNames[o] as string | null,
      page.leaseMs[r] as number,
      page.grantedAt[r] as number,
      this.expiresAt(slot),
      token,
    );
  }

  /** The lock of a slot as readers see it: a LockState with the holder's view (or none between its holders). */
  lockView(slot: number): LockState {
    if (this.idOf(slot) === 0) return new LockState(this.nameOf(slot) as string);
    return this.view(slot).lock;
  }

  /** A view's state now: its row while it holds there, else what became of its claim. */
  stateOf(v: HeldView): ClaimState {
    if (v.slot < this.rows.capacity && this.idOf(v.slot) === v.id) return 'holding';
    const entry = this.locks.get(v.name);
    if (entry === undefined || typeof entry === 'number') return 'ended';
    return entry.holder !== null && entry.holder.id === v.id ? entry.holder.state : 'ended';
  }

  /** What an end event says of a held slot's holder (end-events.ts: endedHolder). */
  endedHolder(slot: number, at: number): EndedHolder {
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    const o = page.origin[r] as number;
    return {
      at,
      lock: page.names[r] as string,
      claimId: page.ids[r] as number,
      token: page.tokens[r] as bigint,
      protocol: 'keyed',
      client: this.origins.clients[o] as string,
      clientName: this.origins.clientNames[o] as string | null,
      grantedAt: page.grantedAt[r] as number,
      waitedMs: 0,
    };
  }

  /** The release event of a held slot (as end-events.ts builds it from a Claim); `token` is the slot's. */
  releaseEvent(slot: number, at: number, cause: ReleaseEvent['cause'], token: bigint): ReleaseEvent {
    // The page found once: on the path of every keyed release.
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    const o = page.origin[r] as number;
    return {
      type: 'release',
      at,
      lock: page.names[r] as string,
      claimId: page.ids[r] as number,
      token,
      protocol: 'keyed',
      client: this.origins.clients[o] as string,
      clientName: this.origins.clientNames[o] as string | null,
      grantedAt: page.grantedAt[r] as number,
      waitedMs: 0,
      cause,
    };
  }

  /** Whether the slot's lock is in the table with no holder and not parked: to be parked (LockTable.parkCompactIfIdle). */
  idleUnparked(slot: number): boolean {
    const page = this.page(slot);
    const r = slot & PAGE_MASK;
    return page.ids[r] === 0 && (page.parkPos[r] as number) < 0 && typeof page.names[r] === 'string';
  }

  clientOf(slot: number): string {
    return this.origins.clients[this.originOf(slot)] as string;
  }

  clientNameOf(slot: number): string | null {
    return this.origins.clientNames[this.originOf(slot)] as string | null;
  }

  ownerOf(slot: number): ClaimOwner {
    return this.origins.owners[this.originOf(slot)] as ClaimOwner;
  }

  grantedAtOf(slot: number): number {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).grantedAt[slot & PAGE_MASK] as number;
  }

  leaseMsOf(slot: number): number {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).leaseMs[slot & PAGE_MASK] as number;
  }

  private originOf(slot: number): number {
    return (this.rows.pages[slot >>> PAGE_BITS] as HolderPage).origin[slot & PAGE_MASK] as number;
  }

  /**
   * The page of a slot below capacity; its row there is `slot & PAGE_MASK`. Small enough that
   * the optimizing compiler always inlines it, where a row accessor (idOf, ...) is a call once a
   * hot function has used its inlining budget: the grant and release paths read rows this way.
   */
  page(slot: number): HolderPage {
    return this.rows.pages[slot >>> PAGE_BITS] as HolderPage;
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
