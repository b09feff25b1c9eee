// Sorts a large set of names in slices, so that building the lock index (lock-index.ts) never
// holds the event loop for long: one sort of 1,000,000 names held the daemon's loop for 0.8-1.1 s,
// longer than the cluster's peer timeout, and an operator's first lock page made the active step
// down (issue 29). The generator does at most `budget` names' worth of work per step and the
// caller runs one step per loop turn: first it collects and sorts chunks of `budget` names, then
// it merges the sorted chunks (a heap over the chunks' heads) into SortedNames' blocks, `budget`
// names per step. Duplicates are dropped (a name dropped and filed again during a walk of the
// engine's Map is seen twice).
import { MAX_BLOCK, SortedNames } from './sorted-names.ts';

/** Steps of one sliced sort: each yields how many names it handled (at most `budget`), and the last returns the names. */
export type SortSteps = Generator<number, SortedNames, undefined>;

export function* sortInSlices(names: Iterator<string>, budget: number): SortSteps {
  if (!Number.isInteger(budget) || budget < 1) throw new RangeError(`budget must be a positive integer, got ${budget}`);
  const chunks: string[][] = [];
  for (;;) {
    const chunk: string[] = [];
    let r = names.next();
    while (r.done !== true) {
      chunk.push(r.value);
      if (chunk.length === budget) break;
      r = names.next();
    }
    if (chunk.length === 0) break;
    // The default sort compares UTF-16 code units, the order of `<`, and is faster than a comparator.
    chunk.sort();
    chunks.push(chunk);
    if (r.done === true) break;
    yield chunk.length;
  }
  return yield* mergeChunks(chunks, budget);
}

/** k-way merge of sorted chunks into blocks of MAX_BLOCK / 2 names, `budget` names taken per step. */
function* mergeChunks(chunks: string[][], budget: number): SortSteps {
  const step = MAX_BLOCK / 2;
  const blocks: string[][] = [];
  let block: string[] = [];
  let last: string | null = null;
  let count = 0;
  // A min-heap of chunk numbers ordered by each chunk's next name; at[c] is chunk c's position.
  const at = new Array<number>(chunks.length).fill(0);
  const heap: number[] = chunks.map((_, c) => c);
  const head = (c: number): string => (chunks[c] as string[])[at[c] as number] as string;
  const less = (x: number, y: number): boolean => head(heap[x] as number) < head(heap[y] as number);
  const siftDown = (from: number): void => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const m = l + 1 < heap.length && less(l + 1, l) ? l + 1 : l;
      if (!less(m, i)) return;
      [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
      i = m;
    }
  };
  for (let i = (heap.length >>> 1) - 1; i >= 0; i--) siftDown(i);
  let taken = 0;
  while (heap.length > 0) {
    if (taken === budget) {
      yield taken;
      taken = 0;
    }
    const c = heap[0] as number;
    const name = head(c);
    taken++;
    at[c] = (at[c] as number) + 1;
    if ((at[c] as number) === (chunks[c] as string[]).length) {
      heap[0] = heap.at(-1) as number;
      heap.pop();
      chunks[c] = []; // let the chunk go as soon as it is merged
    }
    if (heap.length > 0) siftDown(0);
    if (name === last) continue;
    last = name;
    block.push(name);
    count++;
    if (block.length === step) {
      blocks.push(block);
      block = [];
    }
  }
  if (block.length > 0) blocks.push(block);
  return SortedNames.fromSortedBlocks(blocks, count);
}
