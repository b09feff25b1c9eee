// Empties a standby's mirror before it asks for a (new) snapshot, a slice per event-loop turn.
//
// Why. A standby starts its table over when it re-syncs or follows another active, and the
// engine's reset() ends every claim in one turn: 85-300 ms at 1,000,000 locks, over a second at
// several million. A standby cut off in the middle of a 5,000,000-lock join (a freeze past the
// peer timeout) came back, reset millions of locks in one turn, froze past the peer timeout
// again, was cut off again and started over, round and round. Here the locks go one by one
// (replicaClearLock, silent like reset) for at most CLEAR_TURN_MS per turn, with the loop free
// in between (heartbeats, the peer link, clients being redirected), and the reset that follows
// finds an empty table. A small table is reset at once: slicing it would only delay the sync.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

/** Loop time one slice of the clear may take. */
export const CLEAR_TURN_MS = 2;
/** Tables up to this many locks are reset in one turn (well under a few ms). */
export const RESET_AT_ONCE_MAX = 20_000;
/** Locks between two looks at the clock. */
const CHECK_EVERY = 64;

export class TableClear {
  /** What to do once the table is empty; null when no clear is under way. */
  private onEmpty: ((slices: number) => void) | null = null;
  private iterator: Iterator<{ readonly name: string }> | null = null;
  /** Turns the clear under way has taken so far (for the log). */
  slices = 0;

  constructor(
    private readonly engine: Pick<LockEngine, 'lockCount' | 'allLocks' | 'replicaClearLock' | 'reset'>,
    private readonly schedule: (step: () => void) => void = setImmediate,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get clearing(): boolean {
    return this.onEmpty !== null;
  }

  /**
   * Empties the table (ending with reset(), on what is left), then calls `then` with the turns it
   * took: at once (0) for a small table, else after the slices. A clear already under way keeps going and calls the
   * latest `then` only.
   */
  clearThen(then: (slices: number) => void): void {
    if (this.onEmpty !== null) {
      this.onEmpty = then;
      return;
    }
    if (this.engine.lockCount <= RESET_AT_ONCE_MAX) {
      this.engine.reset();
      then(0);
      return;
    }
    this.onEmpty = then;
    this.slices = 0;
    this.iterator = this.engine.allLocks();
    this.schedule(this.step);
  }

  /** Stops a clear under way (the node takes the role with the table as it is); `then` is not called. */
  cancel(): void {
    this.onEmpty = null;
    this.iterator = null;
  }

  private readonly step = (): void => {
    const iterator = this.iterator;
    if (this.onEmpty === null || iterator === null) return;
    this.slices++;
    const started = this.now();
    for (let n = 1; ; n++) {
      const next = iterator.next();
      if (next.done === true) break;
      // The lock the live iterator stands on goes; a Map iterator goes on from the next one.
      this.engine.replicaClearLock(next.value.name);
      if (n % CHECK_EVERY === 0 && this.now() - started >= CLEAR_TURN_MS) {
        this.schedule(this.step);
        return;
      }
    }
    // Whatever the stream filed behind the iterator meanwhile goes too (a small table now).
    this.engine.reset();
    const then = this.onEmpty;
    this.onEmpty = null;
    this.iterator = null;
    then(this.slices);
  };
}
