// Which locks are the most contended, now and over the last hour or day (issue 30: the default
// sort by name buried the contended locks under 200 stuck ones). Fed by the engine's event
// stream, like the charts: the lock path does not pay beyond the listener call every reader of
// the stream already costs.
//
// Now: the names of the locks a waiter joined (`queued`, a Set of names the engine already
// holds), pruned when read: a lock whose queue emptied leaves it then. A read ranks them by
// queue length and the first waiter's wait, keeping the top `limit` in a small array.
//
// Over a range: 5-minute buckets, 288 of them (24 h), each a Map of at most BUCKET_LOCKS locks
// with their queued grants, longest and total wait, and longest queue joined. When a bucket is
// full, a new lock takes the place of the one with the least waiting (score) and starts from that
// score (the space-saving rule): a lock that waited more than 1/BUCKET_LOCKS of a bucket's
// waiting is always kept; a lock that came back after being pushed out shows what it waited
// since (a lower bound). Memory is bounded whatever the table's size: 288 x 64
// tallies of six fields. An event allocates only when its lock is new to the bucket.
import type { LockState } from '../../lib/engine/claim.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ContendedNow, ContendedOver, ContentionRange } from '../../lib/ops-api/lock-views-types.ts';
import { holderView, type ViewClock } from './lock-views.ts';

export const BUCKET_MS = 5 * 60_000;
export const BUCKETS = 288;
export const BUCKET_LOCKS = 64;
/** Locks of a reseed (after a reset) looked at per read. */
export const SEED_SLICE = 20_000;
export const RANGE_MS: Record<ContentionRange, number> = { '1h': 3_600_000, '24h': 86_400_000 };

interface Tally {
  name: string;
  queuedGrants: number;
  maxWaitMs: number;
  totalWaitMs: number;
  maxQueue: number;
  /** What the space-saving rule ranks by: ms waited, plus one per waiter that joined. */
  score: number;
}

interface Bucket {
  no: number;
  tallies: Map<string, Tally>;
}

type TrackedEngine = Pick<LockEngine, 'subscribe' | 'lock' | 'allLocks'>;

export class ContentionTracker {
  private readonly buckets: (Bucket | null)[] = new Array<Bucket | null>(BUCKETS).fill(null);
  private readonly queued = new Set<string>();
  /** The bucket the last event went to, and the engine time its five minutes end: most events land there (no division). */
  private current: Bucket | null = null;
  private currentEnd = 0;
  /** The table's locks to look at for queues that were there before this tracker heard of them. */
  private seed: Iterator<LockState> | null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly engine: TrackedEngine,
    private readonly clock: ViewClock,
    private readonly bucketLocks = BUCKET_LOCKS,
  ) {
    this.seed = engine.allLocks();
    this.unsubscribe = engine.subscribe((e) => this.onEvent(e));
  }

  close(): void {
    this.unsubscribe();
  }

  private onEvent(e: LockEvent): void {
    if (e.type === 'enqueue') {
      this.queued.add(e.lock);
      const t = this.tally(e.at, e.lock);
      if (e.position > t.maxQueue) t.maxQueue = e.position;
      t.score += 1;
    } else if (e.type === 'grant') {
      if (e.waitedMs <= 0) return;
      const t = this.tally(e.at, e.lock);
      t.queuedGrants++;
      t.totalWaitMs += e.waitedMs;
      if (e.waitedMs > t.maxWaitMs) t.maxWaitMs = e.waitedMs;
      t.score += e.waitedMs;
    } else if (e.type === 'reset') {
      // The state was replaced: its queues are learnt again from the table.
      this.queued.clear();
      this.seed = this.engine.allLocks();
    }
  }

  private tally(at: number, name: string): Tally {
    const current = this.current;
    const bucket = current !== null && at < this.currentEnd && at >= this.currentEnd - BUCKET_MS ? current : this.bucketAt(at);
    const known = bucket.tallies.get(name);
    if (known !== undefined) return known;
    return this.admit(bucket, name);
  }

  private bucketAt(at: number): Bucket {
    const no = Math.floor(at / BUCKET_MS);
    const slot = no % BUCKETS;
    let bucket = this.buckets[slot] ?? null;
    if (bucket === null) {
      bucket = { no, tallies: new Map() };
      this.buckets[slot] = bucket;
    } else if (bucket.no !== no) {
      bucket.no = no;
      bucket.tallies.clear();
    }
    this.current = bucket;
    this.currentEnd = (no + 1) * BUCKET_MS;
    return bucket;
  }

  /** A lock new to the bucket: a place of its own, or, in a full bucket, the least one's (space-saving). */
  private admit(bucket: Bucket, name: string): Tally {
    let score = 0;
    if (bucket.tallies.size >= this.bucketLocks) {
      let least: Tally | null = null;
      for (const t of bucket.tallies.values()) if (least === null || t.score < least.score) least = t;
      if (least !== null) {
        bucket.tallies.delete(least.name);
        score = least.score;
      }
    }
    const fresh: Tally = { name, queuedGrants: 0, maxWaitMs: 0, totalWaitMs: 0, maxQueue: 0, score };
    bucket.tallies.set(name, fresh);
    return fresh;
  }

  /** Calls `visit` for each lock with a queue now (pruning those whose queue emptied) until it returns false. */
  forEachQueued(visit: (lock: LockState) => boolean | undefined): void {
    this.continueSeed();
    for (const name of this.queued) {
      const lock = this.engine.lock(name);
      if (lock === undefined || lock.waiting === 0) {
        this.queued.delete(name);
        continue;
      }
      if (visit(lock) === false) return;
    }
  }

  private continueSeed(): void {
    if (this.seed === null) return;
    for (let i = 0; i < SEED_SLICE; i++) {
      const next = this.seed.next();
      if (next.done === true) {
        this.seed = null;
        return;
      }
      if (next.value.waiting > 0) this.queued.add(next.value.name);
    }
  }

  /** The `limit` locks with the longest queues now, then the longest first wait; and how many locks have a queue. */
  now(limit: number): { locks: ContendedNow[]; queuedLocks: number } {
    const top: LockState[] = [];
    let queuedLocks = 0;
    this.forEachQueued((lock) => {
      queuedLocks++;
      if (limit <= 0) return true;
      if (top.length === limit && !ranksBefore(lock, top[limit - 1] as LockState)) return true;
      let i = Math.min(top.length, limit - 1);
      top[i] = lock;
      for (; i > 0 && ranksBefore(lock, top[i - 1] as LockState); i--) top[i] = top[i - 1] as LockState;
      top[i] = lock;
      return true;
    });
    const now = this.clock.now();
    const locks = top.map((lock) => ({
      name: lock.name,
      queueLength: lock.waiting,
      longestWaitMs: lock.head === null ? 0 : Math.max(0, Math.round(now - lock.head.enqueuedAt)),
      holder: lock.holder === null ? null : holderView(lock.holder, this.clock),
    }));
    return { locks, queuedLocks };
  }

  /**
   * The `limit` locks whose waiters waited longest in total over the range (rounded up to whole
   * buckets: the current one and the full ones that reach back over the range).
   */
  over(range: ContentionRange, limit: number): ContendedOver[] {
    const current = Math.floor(this.clock.now() / BUCKET_MS);
    const first = current - RANGE_MS[range] / BUCKET_MS;
    const merged = new Map<string, ContendedOver>();
    for (const bucket of this.buckets) {
      if (bucket === null || bucket.no < first || bucket.no > current) continue;
      for (const t of bucket.tallies.values()) {
        const m = merged.get(t.name);
        if (m === undefined) {
          merged.set(t.name, { name: t.name, queuedGrants: t.queuedGrants, maxWaitMs: t.maxWaitMs, totalWaitMs: t.totalWaitMs, maxQueue: t.maxQueue });
          continue;
        }
        m.queuedGrants += t.queuedGrants;
        m.totalWaitMs += t.totalWaitMs;
        m.maxWaitMs = Math.max(m.maxWaitMs, t.maxWaitMs);
        m.maxQueue = Math.max(m.maxQueue, t.maxQueue);
      }
    }
    return [...merged.values()]
      .sort((a, b) => b.totalWaitMs - a.totalWaitMs || b.maxQueue - a.maxQueue || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .slice(0, limit)
      .map((o) => ({ ...o, maxWaitMs: Math.round(o.maxWaitMs), totalWaitMs: Math.round(o.totalWaitMs) }));
  }
}

/** Longer queue first; then the first waiter that has waited longer; then by name. */
function ranksBefore(a: LockState, b: LockState): boolean {
  if (a.waiting !== b.waiting) return a.waiting > b.waiting;
  const aw = a.head?.enqueuedAt ?? Number.POSITIVE_INFINITY;
  const bw = b.head?.enqueuedAt ?? Number.POSITIVE_INFINITY;
  if (aw !== bw) return aw < bw;
  return a.name < b.name;
}
