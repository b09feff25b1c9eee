// Each lock's last ended grants, for the lock detail's history: a ring of RING_SIZE entries per
// lock, for the MAX_LOCKS locks granted most recently (a Map kept in grant order: a grant moves
// its lock to the newest end, and a lock past the bound takes the oldest one's place and its
// ring's objects, so a busy node with many locks allocates nothing once the rings are full).
// A lock nobody holds any more keeps its history until it is pushed out. Pure: the recorder
// (history-recorder.ts) feeds it wall-clock times from the engine's events.
import type { GrantEnd, GrantRecord, LockHistory, Protocol } from '../../lib/ops-api/api-types.ts';

export const RING_SIZE = 50;
export const MAX_LOCKS = 2_000;

/** One ring entry; reused in place when the ring comes round. */
interface Entry {
  claimId: number;
  protocol: Protocol;
  client: string;
  clientName: string | null;
  token: bigint | null;
  grantedAt: number;
  queueWaitMs: number;
  heldMs: number;
  endedAt: number;
  end: GrantEnd;
}

/** The grant a lock's holder has now, as its grant event told it. */
interface Open {
  claimId: number;
  protocol: Protocol;
  client: string;
  clientName: string | null;
  token: bigint;
  grantedAt: number;
  queueWaitMs: number;
}

class LockLog {
  readonly entries: Entry[] = [];
  /** Index of the next entry to write once the ring is full. */
  next = 0;
  /** The current holder's grant, when `holding`; the object is kept and refilled by the next grant. */
  open: Open | null = null;
  holding = false;
  /** The last holder's last sign of life when it expired (wall ms); NaN when the last end was not an expiry. */
  expiredLastAlive = Number.NaN;

  /** Entries in use; `entries` keeps its objects when a log is cleared for another lock. */
  size = 0;

  clear(): void {
    this.size = 0;
    this.next = 0;
    this.holding = false;
    this.expiredLastAlive = Number.NaN;
  }

  /** The entry to fill next: a new one while the ring grows, then the oldest one, reused. */
  nextEntry(): Entry {
    if (this.size === RING_SIZE) {
      const oldest = this.entries[this.next];
      this.next = (this.next + 1) % RING_SIZE;
      if (oldest !== undefined) return oldest;
    }
    const kept = this.entries[this.size];
    this.size++;
    if (kept !== undefined) return kept;
    const e: Entry = {
      claimId: 0,
      protocol: 'keyed',
      client: '',
      clientName: null,
      token: null,
      grantedAt: 0,
      queueWaitMs: 0,
      heldMs: 0,
      endedAt: 0,
      end: 'release',
    };
    this.entries.push(e);
    return e;
  }
}

export class GrantLog {
  private readonly logs = new Map<string, LockLog>();

  constructor(private readonly maxLocks = MAX_LOCKS) {}

  get lockCount(): number {
    return this.logs.size;
  }

  /** A grant of `lock`: it becomes the newest tracked lock. Positional, so the engine's grant path makes no object for it. */
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
    if (log !== undefined) this.logs.delete(lock);
    else log = this.takeLog();
    this.logs.set(lock, log);
    log.expiredLastAlive = Number.NaN;
    const open = (log.open ??= { claimId, protocol, client, clientName, token, grantedAt, queueWaitMs });
    open.claimId = claimId;
    open.protocol = protocol;
    open.client = client;
    open.clientName = clientName;
    open.token = token;
    open.grantedAt = grantedAt;
    open.queueWaitMs = queueWaitMs;
    log.holding = true;
  }

  /** The holder `claimId` of `lock` ended at `at`; `lastAliveAt` for an expiry. Unknown grants (pushed out, or before start) are skipped. */
  ended(lock: string, claimId: number, at: number, end: GrantEnd, lastAliveAt = Number.NaN): void {
    const log = this.logs.get(lock);
    const open = log?.open;
    if (log === undefined || !log.holding || open === null || open === undefined || open.claimId !== claimId) return;
    log.expiredLastAlive = end === 'expiry' ? lastAliveAt : Number.NaN;
    this.close(log, open, at, end);
  }

  /** A waiter an admin kicked: listed too (with no token), on a lock already tracked. */
  kicked(lock: string, claimId: number, protocol: Protocol, client: string, at: number, waitedMs: number): void {
    const e = this.logs.get(lock)?.nextEntry();
    if (e !== undefined)
      Object.assign(e, {
        claimId,
        protocol,
        client,
        clientName: null,
        token: null,
        grantedAt: Number.NaN,
        queueWaitMs: waitedMs,
        heldMs: Number.NaN,
        endedAt: at,
        end: 'kick',
      });
  }

  /** The node's state was replaced (failover, or it stopped serving): every open grant ends here. */
  failover(at: number): void {
    for (const log of this.logs.values()) {
      if (log.holding && log.open !== null) this.close(log, log.open, at, 'failover');
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
    if (log !== undefined) {
      const n = log.size;
      // Newest is just before `next` once the ring is full, else the last pushed.
      const newest = n < RING_SIZE ? n - 1 : (log.next + RING_SIZE - 1) % RING_SIZE;
      for (let k = 0; k < n; k++) {
        const e = log.entries[(newest - k + n) % n];
        if (e !== undefined) grants.push(recordOf(e));
      }
    }
    const held = grants.filter((g) => g.end !== 'kick');
    return {
      name,
      asOf,
      grants,
      queueWait: exactPercentiles(held.map((g) => g.queueWaitMs)),
      hold: exactPercentiles(held.map((g) => g.heldMs ?? 0)),
    };
  }

  private close(log: LockLog, open: Open, at: number, end: GrantEnd): void {
    const e = log.nextEntry();
    e.claimId = open.claimId;
    e.protocol = open.protocol;
    e.client = open.client;
    e.clientName = open.clientName;
    e.token = open.token;
    e.grantedAt = open.grantedAt;
    e.queueWaitMs = open.queueWaitMs;
    e.heldMs = Math.max(0, at - open.grantedAt);
    e.endedAt = at;
    e.end = end;
    log.holding = false;
  }

  /** A fresh log, or the oldest tracked lock's, cleared, once MAX_LOCKS are tracked. */
  private takeLog(): LockLog {
    if (this.logs.size < this.maxLocks) return new LockLog();
    const oldest = this.logs.keys().next();
    if (oldest.done === true) return new LockLog();
    const log = this.logs.get(oldest.value);
    this.logs.delete(oldest.value);
    log?.clear();
    return log ?? new LockLog();
  }
}

function recordOf(e: Entry): GrantRecord {
  const kick = e.end === 'kick';
  return {
    claimId: String(e.claimId),
    protocol: e.protocol,
    client: e.client,
    clientName: e.clientName,
    token: e.token === null ? null : e.token.toString(),
    grantedAt: kick ? null : Math.round(e.grantedAt),
    queueWaitMs: e.queueWaitMs,
    heldMs: kick ? null : e.heldMs,
    endedAt: Math.round(e.endedAt),
    end: e.end,
  };
}

/** Nearest-rank p50 and p99 of a few values (at most RING_SIZE: sorting them is cheap). */
export function exactPercentiles(values: number[]): { p50: number | null; p99: number | null } {
  if (values.length === 0) return { p50: null, p99: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? null;
  return { p50: at(0.5), p99: at(0.99) };
}
