// The lock table's map from lock name to its entry (lock-table.ts): one Map while the table is
// small, split into shards as it grows large.
//
// Why. A JS Map grows by doubling, and each doubling copies every entry into a new table in one
// call: crossing 4,194,304 locks is one set() of about 360 ms (a 2,097,152-lock crossing about
// 140 ms). A standby applying a 5,000,000-lock snapshot blocked its loop for half a second there,
// half its peer timeout, and an active filling up blocked for as long. Split into 2^k Maps by a
// hash of the name, the largest copy is one shard's.
//
// How. The table starts as one Map (`first`), read with no hash. When it reaches SPLIT_AT
// entries it splits: `first` keeps what it has but takes no new lock, and every lock filed from
// then on goes to its shard. Nothing moves, so a split costs nothing and an iteration under way
// is not disturbed. A reset told that a large table is coming (a standby, told the active's lock
// count at snapshot-begin) starts split, with shards sized for it. A lookup of a split table
// reads the shard, then `first` if it is not there: the hash (a loop over the name) is paid only
// past SPLIT_AT.
//
// Iteration reads `first`, then the shards one by one, each with its Map's live iterator: a lock
// deleted before the iterator reaches it is skipped, one filed in a map not reached yet is
// reached, one filed in a shard already passed is not (a single Map would reach it), and an
// iteration begun before the table split reads the first Map only (what it held then). The
// snapshot walk's argument (server/cluster/snapshot-walk.ts) needs only the first two: every
// lock filed at the start and still filed is reached exactly once (no lock ever changes map
// while filed), and one filed later has its whole state in the event stream. Values are never
// undefined (a lookup's undefined means "not filed").
//
// Hot names (issue 29: a grant at 5 M held within 10 % of one at 1,000). A split table's lookup
// is the name's hash, a shard's probe and, for a lock filed before the split, the first Map's:
// at 5 M held that cost 1.3x a small table's per pair, the engine alone, as the probes into a
// gigabyte of Maps miss the CPU's caches. The locks being taken and given back are few beside
// those held idle, so a split table keeps the names its lookups found lately in a small Map
// (`hot`, at most hotMax) read first: a hit is one probe into a table that stays in cache. Only
// a lookup that finds its name adds it (filling millions of new locks adds nothing), a full
// cache is emptied and refills with what is used next, and set() and delete() drop the name
// from it, so it never answers other than the shards would. When the names in use do not fit
// (fewer hits than twice the names it took, weighed every hotMax names), it is left empty and
// unread for a while, then tried again: such a working set costs what it cost with no cache. A
// table not split has no cache: its one Map is the same single probe.

/** Locks per shard a table sized in advance aims at: a shard's doubling copies at most this many entries. */
export const LOCKS_PER_SHARD = 32_768;
/**
 * Entries at which a table that grew as one Map splits, and tables expected below this start as
 * one Map: its last doubling (131,072 to 262,144) copied 131,072 entries, about 10 ms. Below it
 * a lookup pays no hash; past it the hash and a shard's lookup cost about 1.4x a lookup of one
 * Map of the same size (random names at 1 M, the engine alone, loaded machine).
 */
export const SHARD_FROM = 262_144;
/** The most shards: 1,024 x 32,768 is 32 M locks before a shard's doublings pass the aim. */
export const MAX_SHARDS = 1_024;
/** Entries at which a table grown as one Map splits (SHARD_FROM). */
export const SPLIT_AT = SHARD_FROM;
/** Shards of a table that split as it grew: the aim up to 8 M locks. */
const GROWN_SHARDS = 256;
/**
 * Names a split table keeps in its hot cache: four times MAX_PARKED's (lock-table.ts) reused idle
 * locks, about 0.5 MB with its names. A rotation over 12,000 names at 5 M held: 24 ns a lookup
 * with 16,384, 156 ns without the cache (a loop of lookups alone, loaded machine).
 */
export const HOT_MAX = 16_384;
/**
 * A hot cache that served fewer hits than twice the names it took (weighed every hotMax names
 * taken) is left empty and unread for this many times its size in lookups (2 M: a few seconds of
 * a busy node's pairs), then tried again. A trial costs far more per lookup than a cold lookup
 * (a rotation over 20,000 names at 5 M held, tried every 16 x hotMax lookups: 131 ns a lookup
 * against 98 with no cache; every 128 x: 113 against 113).
 */
export const BYPASS_ROUNDS = 128;

/** Shards for a table expected to hold `expected` locks: 1 (one Map) below SHARD_FROM, else a power of two. */
export function shardsFor(expected: number): number {
  if (!(expected >= SHARD_FROM)) return 1;
  let n = 2;
  while (n < MAX_SHARDS && n * LOCKS_PER_SHARD < expected) n *= 2;
  return n;
}

/**
 * FNV-1a over the name's last 32 characters and its length. Names that differ only before their
 * last 32 characters share a shard: the table is then slower to grow, never wrong.
 */
function hashName(name: string): number {
  const n = name.length;
  let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
  for (let i = n > 32 ? n - 32 : 0; i < n; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 16);
}

export class LockMap<V> {
  /** The whole table until it splits; after, the locks filed before the split (it takes no new one). */
  private readonly first = new Map<string, V>();
  /** The shards, once split (none before). */
  private shards: Map<string, V>[] = [];
  /** shards.length - 1; -1 while the table is one Map. */
  private mask = -1;
  /** Entries in the shards (a sum over a thousand Maps per read would not do). */
  private count = 0;
  /** Split tables only: names found lately, with their values (see the head of this file). */
  private readonly hot = new Map<string, V>();
  /** Lookups the hot cache answered, and names it took, since they were last weighed (get()). */
  private hits = 0;
  private taken = 0;
  /** Lookups left that skip the hot cache, which found itself thrashing (see get()). */
  private bypass = 0;

  /**
   * `splitAt`: the size at which a table grown as one Map splits; `hotMax`: the most names in the
   * hot cache (tests make both small).
   */
  constructor(
    public splitAt = SPLIT_AT,
    private readonly hotMax = HOT_MAX,
  ) {}

  private shardOf(name: string): Map<string, V> {
    return this.shards[hashName(name) & this.mask] as Map<string, V>;
  }

  get(name: string): V | undefined {
    if (this.mask < 0) return this.first.get(name);
    if (this.bypass > 0) {
      this.bypass--;
      return this.coldGet(name);
    }
    const hot = this.hot;
    const cached = hot.get(name);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    const v = this.coldGet(name);
    if (v !== undefined) {
      if (++this.taken >= this.hotMax) {
        // Fewer hits than twice the names taken since the last count: the names in use do not
        // fit (or are each used once, then deleted). A miss pays a probe, an insert (into a Map
        // regrowing from empty) and maybe a delete, about 1.5x what a hit saves (a rotation over
        // 20,000 names at 5 M held: 162 ns a lookup with the cache at 40 % hits, 113 without),
        // so below two hits in three the cache costs more than it saves. Read around it a while.
        const thrashing = this.hits < 2 * this.taken;
        this.hits = 0;
        this.taken = 0;
        if (thrashing) {
          hot.clear();
          this.bypass = BYPASS_ROUNDS * this.hotMax;
          return v;
        }
      }
      // Emptied when full rather than kept in use order: no per-hit bookkeeping on the hot path.
      if (hot.size >= this.hotMax) hot.clear();
      hot.set(name, v);
    }
    return v;
  }

  /** A split table's lookup past the hot cache: the name's shard, then the first Map. */
  private coldGet(name: string): V | undefined {
    // The shard first: past the split, most locks (all of a table split from the start) are there.
    const v = this.shardOf(name).get(name);
    return v !== undefined ? v : this.first.get(name);
  }

  set(name: string, value: V): void {
    const first = this.first;
    if (this.mask < 0) {
      first.set(name, value);
      if (first.size >= this.splitAt) this.split(GROWN_SHARDS);
      return;
    }
    // A new value (a compact lock turned into objects): the next lookup reads it from the shards.
    if (this.hot.size > 0) this.hot.delete(name);
    if (first.size > 0 && first.has(name)) {
      first.set(name, value);
      return;
    }
    const shard = this.shardOf(name);
    const before = shard.size;
    shard.set(name, value);
    this.count += shard.size - before;
  }

  delete(name: string): boolean {
    if (this.mask >= 0) {
      if (this.hot.size > 0) this.hot.delete(name);
      if (this.shardOf(name).delete(name)) {
        this.count--;
        return true;
      }
    }
    return this.first.delete(name);
  }

  get size(): number {
    return this.first.size + this.count;
  }

  /** How many Maps new locks are spread over: 1 until the table splits. */
  get shardCount(): number {
    return this.mask < 0 ? 1 : this.shards.length;
  }

  /** Names in the hot cache (at most hotMax; none while the table is one Map): for tests. */
  get hotSize(): number {
    return this.hot.size;
  }

  /** Entries in each shard (how even the split is, for tests and benchmarks); none before a split. */
  shardSizes(): number[] {
    return this.shards.map((s) => s.size);
  }

  /**
   * Every entry: the first Map's, then each shard's (live: see the head of this file). A table
   * not split is read by its Map's own iterator (a walk of millions in one turn, a reset, pays no
   * generator step per entry); if it splits meanwhile, the locks filed after are not reached,
   * which the head of this file allows.
   */
  values(): IterableIterator<V> {
    if (this.mask < 0) return this.first.values();
    let at = -1;
    let current: Iterator<V> = this.first.values();
    const next = (): IteratorResult<V> => {
      for (;;) {
        const r = current.next();
        // The shards are read anew each step: a clear that changes them ends this walk.
        if (r.done !== true || ++at >= this.shards.length) return r;
        current = (this.shards[at] as Map<string, V>).values();
      }
    };
    const it: IterableIterator<V> = { next, [Symbol.iterator]: () => it };
    return it;
  }

  /**
   * Empties the table, made for `expected` locks from now on (shardsFor: split from the start
   * when large). The Maps are emptied in place, as Map.clear() does.
   */
  clear(expected = 0): void {
    this.first.clear();
    for (const shard of this.shards) shard.clear();
    this.hot.clear();
    this.hits = 0;
    this.taken = 0;
    this.bypass = 0;
    this.count = 0;
    const count = shardsFor(expected);
    if (count === 1) {
      this.shards = [];
      this.mask = -1;
    } else this.split(count);
  }

  /** New locks go to `count` shards from now on (the ones filed stay where they are). */
  private split(count: number): void {
    if (count !== this.shards.length) this.shards = Array.from({ length: count }, () => new Map<string, V>());
    this.mask = count - 1;
  }
}
