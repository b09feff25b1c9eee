// The lock names in code-unit order, for GET /api/v1/locks: one sorted index per engine (the
// daemon's console services make it, ops-services.ts, and hand it to the views), so a
// page costs O(log n + limit) instead of a sort of every name per request (four pollers of
// `?limit=1` at 100,000 locks took the lock path's p50 from 0.16 ms to 31 ms).
//
// Cost model. Nothing until the first page request. That request builds the index (one sort,
// about 40 ms at 100,000 names on the bench machine) and from then on the index listens to the
// engine: each event adds its lock's name to a Set (no sorting on the lock path). The next page
// request first settles those names against the engine (insert or delete, O(log n) each). When
// more than MAX_PENDING names pile up unread, nobody is paging: the index lets go of the engine
// and is rebuilt by the next request.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import { SortedNames } from './sorted-names.ts';

export const MAX_PENDING = 50_000;

type IndexedEngine = Pick<LockEngine, 'subscribe' | 'allLocks' | 'lock'>;

/** Built by whoever owns the engine's console services (one per engine), and passed to the views that page by name. */
export class LockIndex {
  private names: SortedNames | null = null;
  private readonly pending = new Set<string>();
  private stop: (() => void) | null = null;

  constructor(private readonly engine: IndexedEngine) {}

  /** Whether the index is listening to the engine (tests). */
  get warm(): boolean {
    return this.names !== null;
  }

  /** The sorted names, exact for the engine's table right now. */
  current(): SortedNames {
    if (this.names === null) return this.build();
    for (const name of this.pending) {
      if (this.engine.lock(name) === undefined) this.names.delete(name);
      else this.names.insert(name);
    }
    this.pending.clear();
    return this.names;
  }

  /** Stops listening and forgets the names (the next request rebuilds). */
  close(): void {
    this.stop?.();
    this.stop = null;
    this.names = null;
    this.pending.clear();
  }

  /**
   * Forgets the names at once; the listener itself goes after the engine's current event,
   * since unsubscribing while the engine calls its listeners would skip the next one.
   */
  private coolDown(stop: () => void): void {
    this.names = null;
    this.pending.clear();
    if (this.stop === stop) this.stop = null;
    queueMicrotask(stop);
  }

  private build(): SortedNames {
    const names: string[] = [];
    for (const lock of this.engine.allLocks()) names.push(lock.name);
    this.names = SortedNames.from(names);
    this.pending.clear();
    const stop = this.engine.subscribe((e: LockEvent) => {
      if (this.names === null) return;
      // A reset replaced the whole table: rebuilding is cheaper than settling each name.
      if (e.type !== 'reset') this.pending.add(e.lock);
      if (e.type === 'reset' || this.pending.size > MAX_PENDING) this.coolDown(stop);
    });
    this.stop = stop;
    return this.names;
  }
}
