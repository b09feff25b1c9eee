// Each lock's last ended grants, for the lock detail's history: a ring of RING_SIZE entries per
// lock, for about the MAX_LOCKS locks granted most recently.
//
// The layout is what an end costs (issue 14: this log was a sixth of the daemon's CPU per pair at
// 16 in flight). Every lock's ring lives in one shared arena, not in objects and typed arrays of
// its own: the Map gives a slot number (a small integer, no object to follow), one line of
// `meta` says where that slot's ring is, and an entry is eight doubles on one 64-byte line, the
// fencing token among them (a BigUint64Array over the same buffer, so no bigint is kept alive).
// The client's address and identity, strings the engine's claims already hold, go to one
// shared array of references. An end so touches about four cache lines: the Map's, the slot's
// meta, the entry and its two references. The first version (a LockLog object per lock with three
// arrays of its own) touched about nine, each a likely miss at a few hundred locks.
//
// Only an end is written (its event carries the whole grant: events.ts EndedHolder), so the grant
// path does no work here. The Map is kept in filing order and an end only stamps its slot (no Map
// change for a lock already tracked); when a new lock needs room, the oldest-filed lock is pushed
// out unless it ended a grant since it was filed, in which case it is filed again at the newest
// end (the "second chance" clock). The lock pushed out hands its slot to the new one, so nothing
// is allocated once MAX_LOCKS are tracked (the arena grows by doubling up to them). A lock nobody
// holds any more keeps its history until it is pushed out. Pure: the recorder
// (history-recorder.ts) feeds it wall-clock times from the engine's events.
import type { EndedHolder } from '../../lib/engine/events.ts';
import type { GrantEnd, GrantRecord, LockHistory, Protocol } from '../../lib/ops-api/api-types.ts';

export const RING_SIZE = 50;
export const MAX_LOCKS = 2_000;

const ENDS: readonly GrantEnd[] = ['release', 'close', 'expiry', 'force-release', 'kick', 'failover'];
const END_CODE: Record<GrantEnd, number> = { release: 0, close: 1, expiry: 2, 'force-release': 3, kick: 4, failover: 5 };
/** An entry's doubles (one 64-byte line): where each number sits. */
const CLAIM = 0;
const GRANTED = 1;
const WAIT = 2;
const HELD = 3;
const ENDED = 4;
/** End cause (low 3 bits) and protocol (bit 3: session). */
const CODE = 5;
/** In the journal only: the expired holder's last sign of life (NaN for other ends). */
const LAST_ALIVE = 6;
/** The fencing token, read and written through the BigUint64Array view. */
const TOKEN = 7;
const ENTRY = 8;
const SLOT = RING_SIZE * ENTRY;
/** A slot's meta line: the next entry's index, entries in use, the expired holder's last sign of life, and the clock stamps. */
const NEXT = 0;
const SIZE = 1;
const EXPIRED_ALIVE = 2;
const FILED_AT = 3;
const USED_AT = 4;
/** Failover entries in the ring: an end of the same token replaces one (see fileJournal). */
const FAILOVERS = 5;
const META = 8;
/** Ends journaled before they are filed into their rings (one 256 KiB block of numbers). */
const JOURNAL = 4_096;
/** Slots the arena starts with; it doubles up to the bound. */
const FIRST_SLOTS = 16;

export class GrantLog {
  /** Lock name → its slot in the arena, in filing order. */
  private readonly slots = new Map<string, number>();
  private nums = new Float64Array(0);
  private tokens = new BigUint64Array(0);
  private meta = new Float64Array(0);
  /** Per entry, the client's address then its identity. */
  private refs: Array<string | null> = [];
  /** Slots handed out so far (they are never given back, only reused by pushing a lock out). */
  private used = 0;
  /** Ends not yet filed: the same eight numbers per entry, then the lock, client and identity. */
  private readonly journalNums = new Float64Array(JOURNAL * ENTRY);
  private readonly journalTokens = new BigUint64Array(this.journalNums.buffer);
  private readonly journalRefs: Array<string | null> = new Array<string | null>(JOURNAL * 3).fill(null);
  private pending = 0;
  /** Counts ends: the second-chance stamps. */
  private tick = 0;

  constructor(private readonly maxLocks = MAX_LOCKS) {}

  get lockCount(): number {
    this.fileJournal();
    return this.slots.size;
  }

  /**
   * Holder `h` ended at `at` (wall ms) by `end`; `grantedAt` is its grant on the same wall clock,
   * `lastAliveAt` its last sign of life for an expiry. Journaled: filed into its lock's ring at
   * the next read or when the journal is full.
   */
  ended(h: EndedHolder, at: number, grantedAt: number, end: GrantEnd, lastAliveAt = Number.NaN): void {
    this.journal(
      h.lock,
      h.claimId,
      h.protocol === 'session',
      h.client,
      h.clientName,
      h.token,
      grantedAt,
      h.waitedMs,
      Math.max(0, at - grantedAt),
      at,
      end,
      lastAliveAt,
    );
  }

  /** A waiter an admin kicked: listed too (with no token). */
  kicked(lock: string, claimId: number, protocol: Protocol, client: string, at: number, waitedMs: number): void {
    this.journal(lock, claimId, protocol === 'session', client, null, null, Number.NaN, waitedMs, Number.NaN, at, 'kick', Number.NaN);
  }

  /** The node's state was replaced: the holders it ended (the reset event's) are listed as ended by failover. */
  failover(ended: readonly EndedHolder[], at: number, wallOf: (engineMs: number) => number): void {
    this.fileJournal();
    for (let s = 0; s < this.used; s++) this.meta[s * META + EXPIRED_ALIVE] = Number.NaN;
    for (const h of ended) this.ended(h, at, wallOf(h.grantedAt), 'failover');
  }

  /** When the last holder of `lock` expired: its last sign of life (wall ms); NaN otherwise or unknown. */
  expiredLastAlive(lock: string): number {
    this.fileJournal();
    const slot = this.slots.get(lock);
    return slot === undefined ? Number.NaN : (this.meta[slot * META + EXPIRED_ALIVE] ?? Number.NaN);
  }

  /** The lock's history as the API shows it, newest first. */
  history(name: string, asOf: number): LockHistory {
    this.fileJournal();
    const slot = this.slots.get(name);
    const grants: GrantRecord[] = [];
    if (slot !== undefined) {
      const size = this.meta[slot * META + SIZE] ?? 0;
      for (let k = 0; k < size; k++) grants.push(this.record(slot, k));
    }
    // Percentiles of grants that ended: not a kicked waiter, nor a grant a failover took from
    // this node (it was still held, elsewhere; its real end replaces the row when it comes).
    const held = grants.filter((g) => g.end !== 'kick' && g.end !== 'failover');
    return {
      name,
      asOf,
      grants,
      queueWait: exactPercentiles(held.map((g) => g.queueWaitMs)),
      hold: exactPercentiles(held.map((g) => g.heldMs ?? 0)),
    };
  }

  private journal(
    lock: string,
    claimId: number,
    session: boolean,
    client: string,
    name: string | null,
    token: bigint | null,
    grantedAt: number,
    wait: number,
    held: number,
    ended: number,
    end: GrantEnd,
    lastAliveAt: number,
  ): void {
    const j = this.pending;
    const e = j * ENTRY;
    const nums = this.journalNums;
    nums[e + CLAIM] = claimId;
    nums[e + GRANTED] = grantedAt;
    nums[e + WAIT] = wait;
    nums[e + HELD] = held;
    nums[e + ENDED] = ended;
    nums[e + CODE] = END_CODE[end] | (session ? 8 : 0);
    nums[e + LAST_ALIVE] = lastAliveAt;
    // The view stores the value: the event's bigint is not kept.
    this.journalTokens[e + TOKEN] = token ?? 0n;
    const r = j * 3;
    this.journalRefs[r] = lock;
    this.journalRefs[r + 1] = client;
    this.journalRefs[r + 2] = name;
    this.pending = j + 1;
    if (this.pending === JOURNAL) this.fileJournal();
  }

  /**
   * Files the journaled ends into their locks' rings, oldest first. Done in one pass, the few
   * hundred slots an end rate spreads over stay in the cache for the whole pass, where filing each
   * end as it came touched them between the socket's and the engine's work, missing the cache
   * (measured in issue 14: filing at once cost 15 % of the daemon's CPU per pair at 16 in flight).
   */
  private fileJournal(): void {
    const count = this.pending;
    if (count === 0) return;
    this.pending = 0;
    const jn = this.journalNums;
    const jt = this.journalTokens;
    const jr = this.journalRefs;
    for (let j = 0; j < count; j++) {
      const from = j * ENTRY;
      const lock = jr[j * 3] as string;
      const slot = this.slotFor(lock);
      const meta = this.meta;
      const m = slot * META;
      const code = jn[from + CODE] ?? 0;
      // A kick says nothing of the last holder; any other end replaces what an expiry left.
      if ((code & 7) !== END_CODE.kick) meta[m + EXPIRED_ALIVE] = (code & 7) === END_CODE.expiry ? (jn[from + LAST_ALIVE] ?? Number.NaN) : Number.NaN;
      // A grant a failover ended here may end again (another failover, or its real end once the
      // node that kept it says so): one row per grant, the latest, not one per failover.
      if ((meta[m + FAILOVERS] ?? 0) > 0 && (code & 7) !== END_CODE.kick) this.dropFailoverOf(slot, jt[from + TOKEN] ?? 0n);
      const i = meta[m + NEXT] ?? 0;
      meta[m + NEXT] = i + 1 === RING_SIZE ? 0 : i + 1;
      const to = slot * SLOT + i * ENTRY;
      if ((meta[m + SIZE] ?? 0) < RING_SIZE) meta[m + SIZE] = (meta[m + SIZE] ?? 0) + 1;
      else if (((this.nums[to + CODE] ?? 0) & 7) === END_CODE.failover) meta[m + FAILOVERS] = (meta[m + FAILOVERS] ?? 0) - 1;
      if ((code & 7) === END_CODE.failover) meta[m + FAILOVERS] = (meta[m + FAILOVERS] ?? 0) + 1;
      const nums = this.nums;
      for (let k = 0; k < TOKEN; k++) nums[to + k] = jn[from + k] ?? 0;
      this.tokens[to + TOKEN] = jt[from + TOKEN] ?? 0n;
      const r = (slot * RING_SIZE + i) * 2;
      this.refs[r] = jr[j * 3 + 1] ?? '';
      this.refs[r + 1] = jr[j * 3 + 2] ?? null;
      jr[j * 3] = null;
      jr[j * 3 + 1] = null;
      jr[j * 3 + 2] = null;
    }
  }

  /** Takes out the failover entry of `token` in `slot`'s ring, if any: the newer entries move back one place. */
  private dropFailoverOf(slot: number, token: bigint): void {
    const m = slot * META;
    const size = this.meta[m + SIZE] ?? 0;
    const next = this.meta[m + NEXT] ?? 0;
    const at = (k: number) => (next - size + k + 2 * RING_SIZE) % RING_SIZE;
    let found = -1;
    for (let k = size - 1; k >= 0 && found < 0; k--) {
      const e = slot * SLOT + at(k) * ENTRY;
      if (((this.nums[e + CODE] ?? 0) & 7) === END_CODE.failover && this.tokens[e + TOKEN] === token) found = k;
    }
    if (found < 0) return;
    for (let k = found; k < size - 1; k++) {
      const to = slot * SLOT + at(k) * ENTRY;
      const from = slot * SLOT + at(k + 1) * ENTRY;
      // The token through its own view: a double copy could change a NaN-shaped token's bits.
      for (let n = 0; n < TOKEN; n++) this.nums[to + n] = this.nums[from + n] ?? 0;
      this.tokens[to + TOKEN] = this.tokens[from + TOKEN] ?? 0n;
      const rTo = (slot * RING_SIZE + at(k)) * 2;
      const rFrom = (slot * RING_SIZE + at(k + 1)) * 2;
      this.refs[rTo] = this.refs[rFrom] ?? null;
      this.refs[rTo + 1] = this.refs[rFrom + 1] ?? null;
    }
    this.meta[m + NEXT] = (next - 1 + RING_SIZE) % RING_SIZE;
    this.meta[m + SIZE] = size - 1;
    this.meta[m + FAILOVERS] = (this.meta[m + FAILOVERS] ?? 0) - 1;
  }

  /** Entry `k` of `slot` counted back from the newest (0 = newest). */
  private record(slot: number, k: number): GrantRecord {
    const i = ((this.meta[slot * META + NEXT] ?? 0) - 1 - k + 2 * RING_SIZE) % RING_SIZE;
    const e = slot * SLOT + i * ENTRY;
    const r = (slot * RING_SIZE + i) * 2;
    const code = this.nums[e + CODE] ?? 0;
    const end = ENDS[code & 7] ?? 'release';
    const kick = end === 'kick';
    return {
      claimId: String(this.nums[e + CLAIM]),
      protocol: (code & 8) === 0 ? 'keyed' : 'session',
      client: this.refs[r] ?? '',
      clientName: this.refs[r + 1] ?? null,
      token: kick ? null : String(this.tokens[e + TOKEN] ?? 0n),
      grantedAt: kick ? null : Math.round(this.nums[e + GRANTED] ?? 0),
      queueWaitMs: this.nums[e + WAIT] ?? 0,
      heldMs: kick ? null : (this.nums[e + HELD] ?? 0),
      endedAt: Math.round(this.nums[e + ENDED] ?? 0),
      end,
    };
  }

  private slotFor(lock: string): number {
    let slot = this.slots.get(lock);
    if (slot === undefined) {
      slot = this.takeSlot();
      const m = slot * META;
      this.meta[m + FILED_AT] = ++this.tick;
      this.meta[m + USED_AT] = this.tick;
      this.slots.set(lock, slot);
    } else {
      this.meta[slot * META + USED_AT] = ++this.tick;
    }
    return slot;
  }

  /**
   * A fresh slot, or, once MAX_LOCKS are tracked, the slot of the oldest-filed lock with no end
   * since it was filed, emptied. Each lock passed over is filed again at the newest end, so this
   * ends within one pass of the Map.
   */
  private takeSlot(): number {
    if (this.slots.size < this.maxLocks) return this.freshSlot();
    for (;;) {
      const first = this.slots.entries().next();
      if (first.done === true) return this.freshSlot();
      const [name, slot] = first.value;
      this.slots.delete(name);
      const m = slot * META;
      if ((this.meta[m + USED_AT] ?? 0) > (this.meta[m + FILED_AT] ?? 0)) {
        this.meta[m + FILED_AT] = ++this.tick;
        this.meta[m + USED_AT] = this.tick;
        this.slots.set(name, slot);
        continue;
      }
      this.clearSlot(slot);
      return slot;
    }
  }

  private freshSlot(): number {
    const slot = this.used++;
    const capacity = this.meta.length / META;
    if (slot >= capacity) this.grow(Math.min(this.maxLocks, Math.max(FIRST_SLOTS, capacity * 2)));
    this.clearSlot(slot);
    return slot;
  }

  private clearSlot(slot: number): void {
    const m = slot * META;
    this.meta[m + NEXT] = 0;
    this.meta[m + SIZE] = 0;
    this.meta[m + EXPIRED_ALIVE] = Number.NaN;
    this.meta[m + FAILOVERS] = 0;
    this.refs.fill(null, slot * RING_SIZE * 2, (slot + 1) * RING_SIZE * 2);
  }

  private grow(capacity: number): void {
    const nums = new Float64Array(capacity * SLOT);
    nums.set(this.nums);
    this.nums = nums;
    this.tokens = new BigUint64Array(nums.buffer);
    const meta = new Float64Array(capacity * META);
    meta.set(this.meta);
    this.meta = meta;
    const refs = new Array<string | null>(capacity * RING_SIZE * 2).fill(null);
    for (let r = 0; r < this.refs.length; r++) refs[r] = this.refs[r] ?? null;
    this.refs = refs;
  }
}

/** Nearest-rank p50 and p99 of a few values (at most RING_SIZE: sorting them is cheap). */
export function exactPercentiles(values: number[]): { p50: number | null; p99: number | null } {
  if (values.length === 0) return { p50: null, p99: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? null;
  return { p50: at(0.5), p99: at(0.99) };
}
