// Each lock's last ended grants, for the lock detail's history: a ring of RING_SIZE entries per
// lock, for about the MAX_LOCKS locks granted most recently. A ring is typed arrays (numbers,
// tokens as u64, the end cause as a byte) plus two arrays of string references (the client's
// address and name, strings the engine's claims already hold): no object per grant, and no
// fencing-token bigint kept alive, which in the first version (an object per entry) made the
// garbage collector the dearest part of the recorder.
//
// Only an end is written (its event carries the whole grant: events.ts EndedHolder), so the grant
// path does no work here, and an end writes one entry of three arrays, next to the last entry.
// The Map is kept in filing order and an end only stamps its lock (no Map change for a lock
// already tracked); when a new lock needs room, the oldest-filed lock is pushed out unless granted since it
// was filed, in which case it is filed again at the newest end (the "second chance" clock). The
// lock pushed out hands its arrays to the new one, so nothing is allocated once MAX_LOCKS are
// tracked. A lock nobody holds any more keeps its history until it is pushed out. Pure: the
// recorder (history-recorder.ts) feeds it wall-clock times from the engine's events.
import type { EndedHolder } from '../../lib/engine/events.ts';
import type { GrantEnd, GrantRecord, LockHistory, Protocol } from '../../lib/ops-api/api-types.ts';

export const RING_SIZE = 50;
export const MAX_LOCKS = 2_000;

const ENDS: readonly GrantEnd[] = ['release', 'close', 'expiry', 'force-release', 'kick', 'failover'];
const END_CODE: Record<GrantEnd, number> = { release: 0, close: 1, expiry: 2, 'force-release': 3, kick: 4, failover: 5 };
/** Numbers per entry in LockLog.nums: one entry's numbers side by side (one or two cache lines). */
const CLAIM = 0;
const GRANTED = 1;
const WAIT = 2;
const HELD = 3;
const ENDED = 4;
/** End cause (low 3 bits) and protocol (bit 3: session). */
const CODE = 5;
const NUMS = 6;

class LockLog {
  readonly nums = new Float64Array(RING_SIZE * NUMS);
  readonly tokens = new BigUint64Array(RING_SIZE);
  /** Per entry, the client's address then its identity (strings the claims already hold). */
  readonly refs: Array<string | null> = new Array<string | null>(RING_SIZE * 2).fill(null);
  /** Entries in use, and the slot the next one goes to. */
  size = 0;
  next = 0;
  /** The last holder's last sign of life when it expired (wall ms); NaN when the last end was not an expiry. */
  expiredLastAlive = Number.NaN;

  /** The GrantLog's clock when this log was filed at the Map's newest end, and at its last end. */
  filedAt = 0;
  usedAt = 0;

  clear(): void {
    this.size = 0;
    this.next = 0;
    this.expiredLastAlive = Number.NaN;
    this.refs.fill(null);
  }

  push(
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
  ): void {
    const i = this.next;
    this.next = i + 1 === RING_SIZE ? 0 : i + 1;
    if (this.size < RING_SIZE) this.size++;
    const n = i * NUMS;
    const nums = this.nums;
    nums[n + CLAIM] = claimId;
    nums[n + GRANTED] = grantedAt;
    nums[n + WAIT] = wait;
    nums[n + HELD] = held;
    nums[n + ENDED] = ended;
    nums[n + CODE] = END_CODE[end] | (session ? 8 : 0);
    // BigUint64Array stores the value, so the event's bigint is not kept.
    this.tokens[i] = token ?? 0n;
    this.refs[2 * i] = client;
    this.refs[2 * i + 1] = name;
  }

  /** Entry `k` counted back from the newest (0 = newest). */
  record(k: number): GrantRecord {
    const i = (this.next - 1 - k + 2 * RING_SIZE) % RING_SIZE;
    const n = i * NUMS;
    const code = this.nums[n + CODE] ?? 0;
    const end = ENDS[code & 7] ?? 'release';
    const kick = end === 'kick';
    return {
      claimId: String(this.nums[n + CLAIM]),
      protocol: (code & 8) === 0 ? 'keyed' : 'session',
      client: this.refs[2 * i] ?? '',
      clientName: this.refs[2 * i + 1] ?? null,
      token: kick ? null : String(this.tokens[i] ?? 0n),
      grantedAt: kick ? null : Math.round(this.nums[n + GRANTED] ?? 0),
      queueWaitMs: this.nums[n + WAIT] ?? 0,
      heldMs: kick ? null : (this.nums[n + HELD] ?? 0),
      endedAt: Math.round(this.nums[n + ENDED] ?? 0),
      end,
    };
  }
}

export class GrantLog {
  private readonly logs = new Map<string, LockLog>();
  /** Counts grants: the second-chance stamps. */
  private tick = 0;

  constructor(private readonly maxLocks = MAX_LOCKS) {}

  get lockCount(): number {
    return this.logs.size;
  }

  /**
   * Holder `h` ended at `at` (wall ms) by `end`; `grantedAt` is its grant on the same wall clock,
   * `lastAliveAt` its last sign of life for an expiry.
   */
  ended(h: EndedHolder, at: number, grantedAt: number, end: GrantEnd, lastAliveAt = Number.NaN): void {
    const log = this.logFor(h.lock);
    log.expiredLastAlive = end === 'expiry' ? lastAliveAt : Number.NaN;
    log.push(h.claimId, h.protocol === 'session', h.client, h.clientName, h.token, grantedAt, h.waitedMs, Math.max(0, at - grantedAt), at, end);
  }

  /** A waiter an admin kicked: listed too (with no token). */
  kicked(lock: string, claimId: number, protocol: Protocol, client: string, at: number, waitedMs: number): void {
    this.logFor(lock).push(claimId, protocol === 'session', client, null, null, Number.NaN, waitedMs, Number.NaN, at, 'kick');
  }

  /** The node's state was replaced: the holders it ended (the reset event's) are listed as ended by failover. */
  failover(ended: readonly EndedHolder[], at: number, wallOf: (engineMs: number) => number): void {
    for (const log of this.logs.values()) log.expiredLastAlive = Number.NaN;
    for (const h of ended) this.ended(h, at, wallOf(h.grantedAt), 'failover');
  }

  private logFor(lock: string): LockLog {
    let log = this.logs.get(lock);
    if (log === undefined) {
      log = this.takeLog();
      log.filedAt = ++this.tick;
      log.usedAt = log.filedAt;
      this.logs.set(lock, log);
    } else {
      log.usedAt = ++this.tick;
    }
    return log;
  }

  /** When the last holder of `lock` expired: its last sign of life (wall ms); NaN otherwise or unknown. */
  expiredLastAlive(lock: string): number {
    return this.logs.get(lock)?.expiredLastAlive ?? Number.NaN;
  }

  /** The lock's history as the API shows it, newest first. */
  history(name: string, asOf: number): LockHistory {
    const log = this.logs.get(name);
    const grants: GrantRecord[] = [];
    if (log !== undefined) for (let k = 0; k < log.size; k++) grants.push(log.record(k));
    const held = grants.filter((g) => g.end !== 'kick');
    return {
      name,
      asOf,
      grants,
      queueWait: exactPercentiles(held.map((g) => g.queueWaitMs)),
      hold: exactPercentiles(held.map((g) => g.heldMs ?? 0)),
    };
  }

  /**
   * A fresh log, or, once MAX_LOCKS are tracked, the log of the oldest-filed lock with no end
   * since it was filed, cleared. Each lock passed over is filed again at the newest end, so this
   * ends within one pass of the Map.
   */
  private takeLog(): LockLog {
    if (this.logs.size < this.maxLocks) return new LockLog();
    for (;;) {
      const first = this.logs.entries().next();
      if (first.done === true) return new LockLog();
      const [name, log] = first.value;
      this.logs.delete(name);
      if (log.usedAt > log.filedAt) {
        log.filedAt = ++this.tick;
        log.usedAt = log.filedAt;
        this.logs.set(name, log);
        continue;
      }
      log.clear();
      return log;
    }
  }
}

/** Nearest-rank p50 and p99 of a few values (at most RING_SIZE: sorting them is cheap). */
export function exactPercentiles(values: number[]): { p50: number | null; p99: number | null } {
  if (values.length === 0) return { p50: null, p99: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? null;
  return { p50: at(0.5), p99: at(0.99) };
}
