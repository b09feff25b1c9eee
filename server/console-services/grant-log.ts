// Each lock's last ended grants, for the lock detail's history: a ring of RING_SIZE entries per
// lock, for about the MAX_LOCKS locks granted most recently. A ring is typed arrays (numbers,
// tokens as u64, the end cause as a byte) plus two arrays of string references (the client's
// address and name, strings the engine's claims already hold): no object per grant, and no
// fencing-token bigint kept alive, which in the first version (an object per entry) made the
// garbage collector the dearest part of the recorder.
//
// The Map is kept in filing order and a grant only stamps its lock (no Map change on the grant
// path); when a new lock needs room, the oldest-filed lock is pushed out unless granted since it
// was filed, in which case it is filed again at the newest end (the "second chance" clock). The
// lock pushed out hands its arrays to the new one, so nothing is allocated once MAX_LOCKS are
// tracked. A lock nobody holds any more keeps its history until it is pushed out. Pure: the
// recorder (history-recorder.ts) feeds it wall-clock times from the engine's events.
import type { GrantEnd, GrantRecord, LockHistory, Protocol } from '../../lib/ops-api/api-types.ts';

export const RING_SIZE = 50;
export const MAX_LOCKS = 2_000;

const ENDS: readonly GrantEnd[] = ['release', 'close', 'expiry', 'force-release', 'kick', 'failover'];
const END_CODE: Record<GrantEnd, number> = { release: 0, close: 1, expiry: 2, 'force-release': 3, kick: 4, failover: 5 };
/** Numbers per entry in LockLog.nums. */
const CLAIM = 0;
const GRANTED = 1;
const WAIT = 2;
const HELD = 3;
const ENDED = 4;
const NUMS = 5;

class LockLog {
  readonly nums = new Float64Array(RING_SIZE * NUMS);
  readonly tokens = new BigUint64Array(RING_SIZE);
  /** End cause (low 3 bits) and protocol (bit 3: session). */
  readonly codes = new Uint8Array(RING_SIZE);
  readonly clients: string[] = new Array<string>(RING_SIZE).fill('');
  readonly names: Array<string | null> = new Array<string | null>(RING_SIZE).fill(null);
  /** Entries in use, and the slot the next one goes to. */
  size = 0;
  next = 0;

  /** The current holder's grant, while `holding`. */
  holding = false;
  openClaim = 0;
  openSession = false;
  openClient = '';
  openName: string | null = null;
  openToken = 0n;
  openGrantedAt = 0;
  openWait = 0;
  /** The last holder's last sign of life when it expired (wall ms); NaN when the last end was not an expiry. */
  expiredLastAlive = Number.NaN;

  /** The GrantLog's clock when this log was filed at the Map's newest end, and at its last grant. */
  filedAt = 0;
  usedAt = 0;

  clear(): void {
    this.size = 0;
    this.next = 0;
    this.holding = false;
    this.expiredLastAlive = Number.NaN;
    this.clients.fill('');
    this.names.fill(null);
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
    this.next = (i + 1) % RING_SIZE;
    if (this.size < RING_SIZE) this.size++;
    const n = i * NUMS;
    this.nums[n + CLAIM] = claimId;
    this.nums[n + GRANTED] = grantedAt;
    this.nums[n + WAIT] = wait;
    this.nums[n + HELD] = held;
    this.nums[n + ENDED] = ended;
    // BigUint64Array stores the value, so the event's bigint is not kept.
    this.tokens[i] = token ?? 0n;
    this.codes[i] = END_CODE[end] | (session ? 8 : 0);
    this.clients[i] = client;
    this.names[i] = name;
  }

  /** Entry `k` counted back from the newest (0 = newest). */
  record(k: number): GrantRecord {
    const i = (this.next - 1 - k + 2 * RING_SIZE) % RING_SIZE;
    const n = i * NUMS;
    const code = this.codes[i] ?? 0;
    const end = ENDS[code & 7] ?? 'release';
    const kick = end === 'kick';
    return {
      claimId: String(this.nums[n + CLAIM]),
      protocol: (code & 8) === 0 ? 'keyed' : 'session',
      client: this.clients[i] ?? '',
      clientName: this.names[i] ?? null,
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

  /** A grant of `lock`. Positional, so the engine's grant path makes no object for it. */
  granted(
    lock: string,
    claimId: number,
    protocol: Protocol,
    client: string,
    clientName: string | null,
    token: bigint,
    grantedAt: number,
    queueWaitMs: number,
  ): void {
    let log = this.logs.get(lock);
    if (log === undefined) {
      log = this.takeLog();
      log.filedAt = ++this.tick;
      log.usedAt = log.filedAt;
      this.logs.set(lock, log);
    } else {
      log.usedAt = ++this.tick;
    }
    log.expiredLastAlive = Number.NaN;
    log.holding = true;
    log.openClaim = claimId;
    log.openSession = protocol === 'session';
    log.openClient = client;
    log.openName = clientName;
    log.openToken = token;
    log.openGrantedAt = grantedAt;
    log.openWait = queueWaitMs;
  }

  /** The holder `claimId` of `lock` ended at `at`; `lastAliveAt` for an expiry. Unknown grants (pushed out, or before start) are skipped. */
  ended(lock: string, claimId: number, at: number, end: GrantEnd, lastAliveAt = Number.NaN): void {
    const log = this.logs.get(lock);
    if (log === undefined || !log.holding || log.openClaim !== claimId) return;
    log.expiredLastAlive = end === 'expiry' ? lastAliveAt : Number.NaN;
    this.close(log, at, end);
  }

  /** A waiter an admin kicked: listed too (with no token), on a lock already tracked. */
  kicked(lock: string, claimId: number, protocol: Protocol, client: string, at: number, waitedMs: number): void {
    this.logs.get(lock)?.push(claimId, protocol === 'session', client, null, null, Number.NaN, waitedMs, Number.NaN, at, 'kick');
  }

  /** The node's state was replaced (failover, or it stopped serving): every open grant ends here. */
  failover(at: number): void {
    for (const log of this.logs.values()) {
      if (log.holding) this.close(log, at, 'failover');
      log.expiredLastAlive = Number.NaN;
    }
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

  private close(log: LockLog, at: number, end: GrantEnd): void {
    const held = Math.max(0, at - log.openGrantedAt);
    log.push(log.openClaim, log.openSession, log.openClient, log.openName, log.openToken, log.openGrantedAt, log.openWait, held, at, end);
    log.holding = false;
  }

  /**
   * A fresh log, or, once MAX_LOCKS are tracked, the log of the oldest-filed lock not granted
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
