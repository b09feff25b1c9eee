// The lock table's map from lock name to its entry (lock-table.ts), in shards when it is known
// to be large.
//
// Why. A JS Map grows by doubling, and each doubling copies every entry into a new table in one
// call: crossing 4,194,304 locks is one set() of about 360 ms (a 2,097,152-lock crossing about
// 140 ms), and deleting its way down shrinks it the same way. A standby applying a 5,000,000-lock
// snapshot blocked its loop for half a second there, half its peer timeout. Split into 2^k Maps
// by a hash of the name, the largest copy is one shard's.
//
// The hash costs a loop over the name on every lookup, so a table is sharded only when its
// owner says it will be large (reset(expected): a standby told the active's lock count at
// snapshot-begin); a table that starts small is one Map, read with no hash at all. The shard
// count is fixed until the next clear, so a lock's shard never moves while it is filed.
//
// Iteration is shard by shard, each with its Map's live iterator: a lock deleted before the
// iterator reaches it is skipped, one added to a shard not reached yet is reached, one added to
// a shard already passed is not (a single Map would reach it). The snapshot walk's argument
// (server/cluster/snapshot-walk.ts) needs only the first two: every lock filed at the start and
// still filed is reached once, and one filed later has its whole state in the event stream.

/** Locks per shard a sharded table aims at: a shard's doubling then copies at most this many entries. */
export const LOCKS_PER_SHARD = 32_768;
/** Tables expected below this stay one Map (no hash per lookup). */
export const SHARD_FROM = 262_144;
/** The most shards: 1,024 x 32,768 is 32 M locks before a shard's doublings pass the aim. */
export const MAX_SHARDS = 1_024;

/** Shards for a table expected to hold `expected` locks: 1 below SHARD_FROM, else a power of two. */
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
  private shards: Map<string, V>[] = [new Map()];
  /** The first shard: the whole table when there is one. */
  private first: Map<string, V> = this.shards[0] as Map<string, V>;
  /** shards.length - 1; 0 when the table is one Map. */
  private mask = 0;
  /** Entries in all shards while sharded (a sum over a thousand Maps per read would not do). */
  private count = 0;

  private shardOf(name: string): Map<string, V> {
    return this.mask === 0 ? this.first : (this.shards[hashName(name) & this.mask] as Map<string, V>);
  }

  get(name: string): V | undefined {
    return this.mask === 0 ? this.first.get(name) : this.shardOf(name).get(name);
  }

  set(name: string, value: V): void {
    if (this.mask === 0) {
      this.first.set(name, value);
      return;
    }
    const shard = this.shardOf(name);
    const before = shard.size;
    shard.set(name, value);
    this.count += shard.size - before;
  }

  delete(name: string): boolean {
    if (this.mask === 0) return this.first.delete(name);
    const gone = this.shardOf(name).delete(name);
    if (gone) this.count--;
    return gone;
  }

  get size(): number {
    return this.mask === 0 ? this.first.size : this.count;
  }

  /** How many Maps the table is split into (1 unless reset for a large table). */
  get shardCount(): number {
    return this.shards.length;
  }

  /** Entries in each shard (how even the split is, for tests and benchmarks). */
  shardSizes(): number[] {
    return this.shards.map((s) => s.size);
  }

  /** Every entry, shard by shard (live: see the head of this file). */
  *values(): IterableIterator<V> {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) yield* (shards[i] as Map<string, V>).values();
  }

  /**
   * Empties the table, split for `expected` locks from now on (shardsFor). The Maps are emptied in
   * place, as Map.clear() does, so an iterator under way ends instead of reading a stale table.
   */
  clear(expected = 0): void {
    for (const shard of this.shards) shard.clear();
    this.count = 0;
    const count = shardsFor(expected);
    if (count === this.shards.length) return;
    this.shards = Array.from({ length: count }, () => new Map<string, V>());
    this.first = this.shards[0] as Map<string, V>;
    this.mask = count - 1;
  }
}
