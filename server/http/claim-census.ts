// The claim census behind baton_locks_held, baton_waiters, baton_sessions and
// baton_oldest_hold_seconds: holders and waiters per protocol and the oldest grant, by walking the
// lock table. A scrape never walks a big table itself: a table that fits in one slice is walked
// at the scrape (exact, at most one slice of work); a bigger one is walked in the background in
// slices of CENSUS_SLICE claims with the loop let go between them, again every CENSUS_REFRESH_MS
// while someone scrapes, and a scrape serves the last complete census (O(1)). Only the first
// scrape of a big table, or the first after a reset or after CENSUS_IDLE_MS without a scrape,
// waits for a walk (sliced: the loop runs meanwhile). The engine listener does one increment per
// reset and nothing for the other events.
import type { LockState, Protocol } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

export type Tally = Record<Protocol, number>;
export interface Census {
  held: Tally;
  waiting: Tally;
  /** The grant time (engine ms) of the longest current hold; +Infinity when nothing is held. */
  oldestGrantedAt: number;
}

/** Claims (locks and waiters) visited per event-loop turn by a walk: about a millisecond of work. */
export const CENSUS_SLICE = 4_096;
/** A big table's census is walked again this long after the previous walk ended, while scraped. */
export const CENSUS_REFRESH_MS = 5_000;
/** With no scrape for this long the background walks stop (a scraper-less daemon does no census work). */
export const CENSUS_IDLE_MS = 60_000;

export type CensusEngine = Pick<LockEngine, 'allLocks' | 'subscribe' | 'lockCount' | 'parkedLockCount' | 'waiterCount'>;

export interface CensusOptions {
  slice?: number;
  refreshMs?: number;
  idleMs?: number;
}

const emptyCensus = (): Census => ({ held: { keyed: 0, session: 0 }, waiting: { keyed: 0, session: 0 }, oldestGrantedAt: Number.POSITIVE_INFINITY });
const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export class ClaimCensus {
  /** The most claims (locks plus waiters) any one loop turn of any walk visited: for tests. */
  maxVisitedInTurn = 0;
  /** Walks begun (the synchronous walk of a small table included): for tests. */
  walks = 0;
  private readonly slice: number;
  private readonly refreshMs: number;
  private readonly idleMs: number;
  private last: Census | null = null;
  private walking: Promise<Census> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastScrapeAt = Number.NEGATIVE_INFINITY;
  /** Bumped by a reset: the state was replaced, a walk under way and the last census are void. */
  private generation = 0;
  private lastGeneration = -1;

  constructor(
    private readonly engine: CensusEngine,
    options: CensusOptions = {},
  ) {
    this.slice = options.slice ?? CENSUS_SLICE;
    this.refreshMs = options.refreshMs ?? CENSUS_REFRESH_MS;
    this.idleMs = options.idleMs ?? CENSUS_IDLE_MS;
    engine.subscribe((e) => {
      if (e.type === 'reset') this.generation++;
    });
  }

  /** The census a scrape reports: exact for a table of at most one slice, else the last complete walk. */
  read(): Census | Promise<Census> {
    this.lastScrapeAt = performance.now();
    const e = this.engine;
    // Locks in the Map (parked idle ones too: the walk visits them) plus waiters: one slice's work at most.
    if (e.lockCount + e.parkedLockCount + e.waiterCount <= this.slice) {
      this.walks++;
      return this.walkAll();
    }
    // The last walk is served while the walks go on (one under way or the next scheduled): they
    // stop after idleMs without a scrape, and a walk from before that is not served.
    if (this.last !== null && this.lastGeneration === this.generation && (this.walking !== null || this.timer !== null)) return this.last;
    return this.walk();
  }

  /** Stops the background walks (the daemon's shutdown); a walk under way runs to its end and schedules none. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.lastScrapeAt = Number.NEGATIVE_INFINITY;
  }

  private schedule(): void {
    // A walk a scrape started (after a reset) while the next was scheduled: one timer, not two.
    if (this.timer !== null || performance.now() - this.lastScrapeAt > this.idleMs) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.walk();
    }, this.refreshMs);
    this.timer.unref();
  }

  private walk(): Promise<Census> {
    this.walking ??= this.sliced().finally(() => {
      this.walking = null;
      this.schedule();
    });
    return this.walking;
  }

  /**
   * One walk in slices. A Map iterator stays valid while the table changes under it (deleted
   * locks not yet reached are skipped, added ones are reached), so the figures are a sample of a
   * moving table, as any gauge is; a reset meanwhile starts the walk over.
   */
  private async sliced(): Promise<Census> {
    for (;;) {
      const generation = this.generation;
      this.walks++;
      const census = emptyCensus();
      const locks = this.engine.allLocks();
      let done = false;
      while (!done && generation === this.generation) {
        done = this.visit(locks, census);
        if (!done) await turn();
      }
      if (generation === this.generation) {
        this.last = census;
        this.lastGeneration = generation;
        return census;
      }
    }
  }

  /** Visits claims until the slice is used up; true when the table is done. One lock's queue is visited whole. */
  private visit(locks: IterableIterator<LockState>, census: Census): boolean {
    const { held, waiting } = census;
    let visited = 0;
    let done = false;
    while (visited < this.slice) {
      const next = locks.next();
      if (next.done === true) {
        done = true;
        break;
      }
      const lock = next.value;
      visited++;
      const holder = lock.holder;
      if (holder !== null) {
        held[holder.protocol]++;
        if (holder.grantedAt < census.oldestGrantedAt) census.oldestGrantedAt = holder.grantedAt;
      }
      for (let c = lock.head; c !== null; c = c.next) {
        waiting[c.protocol]++;
        visited++;
      }
    }
    if (visited > this.maxVisitedInTurn) this.maxVisitedInTurn = visited;
    return done;
  }

  /** A table of at most one slice, walked at once (read() checked its size). */
  private walkAll(): Census {
    const census = emptyCensus();
    this.visit(this.engine.allLocks(), census);
    return census;
  }
}
