// The lock names in code-unit order, for GET /api/v1/locks: one sorted index per engine (the
// daemon's console services make it, ops-services.ts, and hand it to the views), so a
// page costs O(log n + limit) instead of a sort of every name per request (four pollers of
// `?limit=1` at 100,000 locks took the lock path's p50 from 0.16 ms to 31 ms).
//
// Cost model. Nothing until the first page request. That request builds the index and from
// then on the index listens to the engine: each event adds its lock's name to a Set (no sorting
// on the lock path). The next page request first settles those names against the engine
// (insert or delete, O(log n) each). When more than MAX_PENDING names pile up unread, nobody is
// paging: the index lets go of the engine and is rebuilt by the next request.
//
// The build is spread over loop turns (sliced-sort.ts, SLICE_NAMES names a turn) once the table
// holds more than SLICE_NAMES locks: one sort of 1,000,000 names held the loop for 0.8-1.1 s and
// made an active step down (issue 29). The index listens to the engine before it walks the
// table, so a name that comes or goes during the build is in `pending` and is settled after it;
// a reset during the build starts it again. Requests that arrive meanwhile wait for the same
// build. Settling more than SLICE_NAMES pending names is spread over turns the same way.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import { sortInSlices } from './sliced-sort.ts';
import type { SortedNames } from './sorted-names.ts';

export const MAX_PENDING = 50_000;
/** Names one loop turn handles at most while building or settling (a few ms of loop time). */
export const SLICE_NAMES = 4_096;

type IndexedEngine = Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock' | 'lockCount'>;

export interface LockIndexOptions {
  /** Names per loop turn (SLICE_NAMES); tables up to this size are built in one go. */
  sliceNames?: number;
  /** Waits for the next loop turn (setImmediate: the lock path's I/O is served in between). */
  nextTurn?: () => Promise<void>;
  /** Told how many names each slice handled (tests check the budget). */
  onSlice?: (names: number) => void;
}

const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function* lockNames(engine: IndexedEngine): Generator<string, void, undefined> {
  for (const lock of engine.allLocks()) yield lock.name;
}

/** Built by whoever owns the engine's console services (one per engine), and passed to the views that page by name. */
export class LockIndex {
  private names: SortedNames | null = null;
  private readonly pending = new Set<string>();
  private stop: (() => void) | null = null;
  /** The current subscription; a listener that is not it ignores events (it is being removed). */
  private sub: object | null = null;
  /** Bumped by a reset during a build: the build walks the table again. */
  private generation = 0;
  private building: Promise<SortedNames> | null = null;
  /** Which build `building` is (a build that ends clears it only if no newer one took its place). */
  private builds = 0;
  /** Bumped by close(): a build or catch-up under way then fails rather than listen again. */
  private closes = 0;
  private catchingUp: Promise<SortedNames> | null = null;
  private readonly slice: number;
  private readonly nextTurn: () => Promise<void>;
  private readonly onSlice: (names: number) => void;

  constructor(
    private readonly engine: IndexedEngine,
    options: LockIndexOptions = {},
  ) {
    this.slice = options.sliceNames ?? SLICE_NAMES;
    if (!Number.isInteger(this.slice) || this.slice < 1) throw new RangeError(`sliceNames must be a positive integer, got ${this.slice}`);
    this.nextTurn = options.nextTurn ?? nextImmediate;
    this.onSlice = options.onSlice ?? (() => {});
  }

  /** Whether the index is built and listening to the engine (tests). */
  get warm(): boolean {
    return this.names !== null;
  }

  /** The sorted names, exact for the engine's table when the promise settles (read them in that turn). */
  current(): Promise<SortedNames> {
    const names = this.names;
    if (names === null) {
      if (this.building !== null) return this.building;
      const built = this.build();
      // A small table is built before build() returns; only a build still under way is shared.
      if (this.names === null) this.building = built;
      return built;
    }
    if (this.pending.size <= this.slice) {
      this.settle(names, this.pending.size);
      return Promise.resolve(names);
    }
    this.catchingUp ??= this.catchUp(names);
    return this.catchingUp;
  }

  /** Stops listening and forgets the names (the next request rebuilds; a build under way fails). */
  close(): void {
    this.closes++;
    this.stop?.();
    this.stop = null;
    this.sub = null;
    this.names = null;
    this.pending.clear();
    // The next request builds afresh instead of waiting for one that will fail.
    this.building = null;
    this.catchingUp = null;
  }

  /** Settles up to `max` pending names against the engine. */
  private settle(names: SortedNames, max: number): number {
    let done = 0;
    for (const name of this.pending) {
      if (done === max) break;
      if (this.engine.lock(name) === undefined) names.delete(name);
      else names.insert(name);
      this.pending.delete(name);
      done++;
    }
    return done;
  }

  /** Settles a backlog of pending names a slice per turn, then answers like current(). */
  private async catchUp(names: SortedNames): Promise<SortedNames> {
    const closes = this.closes;
    try {
      while (this.names === names && this.pending.size > this.slice) {
        this.onSlice(this.settle(names, this.slice));
        await this.nextTurn();
        if (this.closes !== closes) throw closedError();
      }
    } finally {
      this.catchingUp = null;
    }
    // Cooled down meanwhile (a reset, or a burst past MAX_PENDING): current() builds afresh.
    return this.current();
  }

  private listen(): object {
    if (this.sub !== null) return this.sub;
    const sub = {};
    this.sub = sub;
    const stop = this.engine.subscribe((e: LockEvent) => {
      if (this.sub !== sub) return;
      if (this.names === null) {
        // Building: a reset replaced the table under the walk, so the build walks it again.
        if (e.type === 'reset') this.generation++;
        else this.pending.add(e.lock);
        return;
      }
      // A reset replaced the whole table: rebuilding is cheaper than settling each name.
      if (e.type !== 'reset') this.pending.add(e.lock);
      if (e.type === 'reset' || this.pending.size > MAX_PENDING) this.coolDown(stop);
    });
    this.stop = stop;
    return sub;
  }

  /**
   * Forgets the names at once; the listener itself goes after the engine's current event,
   * since unsubscribing while the engine calls its listeners would skip the next one.
   */
  private coolDown(stop: () => void): void {
    this.names = null;
    this.pending.clear();
    this.sub = null;
    if (this.stop === stop) this.stop = null;
    queueMicrotask(stop);
  }

  private async build(): Promise<SortedNames> {
    const id = ++this.builds;
    const closes = this.closes;
    try {
      for (;;) {
        // Listening first: a name filed or dropped after the walk passed it is in `pending`.
        this.listen();
        const generation = this.generation;
        this.pending.clear();
        // A small table is built in this turn, as before the sliced build.
        const inOneGo = this.engine.lockCount <= this.slice;
        const steps = sortInSlices(lockNames(this.engine), this.slice);
        let step = steps.next();
        while (step.done !== true && this.generation === generation) {
          this.onSlice(step.value);
          if (!inOneGo) await this.nextTurn();
          if (this.closes !== closes) throw closedError();
          if (this.generation === generation) step = steps.next();
        }
        if (step.done !== true) continue;
        this.names = step.value;
        // From here the listener treats the index as built; current() settles what came meanwhile.
        this.building = null;
        this.builds++;
        return await this.current();
      }
    } finally {
      if (this.builds === id) this.building = null;
    }
  }
}

function closedError(): Error {
  return new Error('the lock index was closed while it was being built');
}
