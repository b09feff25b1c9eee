// The one binary search: the first index at which a monotone test turns true. Sorted arrays
// (a lower bound, an insertion point, a block by its first name) and searches over lengths that
// are not arrays at all (the shortest prefix of a text that fails to parse) all reduce to it,
// so the midpoint and the off-by-one live in one place. Pure, imports nothing: the engine's
// holes, the console's sorted names and the cluster file's parser can all use it.

/**
 * The first index in [0, count) at which `holds` is true, or `count` if it holds nowhere.
 * `holds` must be monotone: false up to some index, true from there on. It is called
 * about log2(count) times, only with indexes below `count`.
 */
export function firstIndexWhere(count: number, holds: (index: number) => boolean): number {
  let low = 0;
  let high = count;
  while (low < high) {
    // Both are below 2^31 (array lengths and string lengths are), so the sum cannot lose bits.
    const mid = (low + high) >>> 1;
    if (holds(mid)) high = mid;
    else low = mid + 1;
  }
  return low;
}
