// Which locks a promotion must look at. A promoting standby ends every replicated waiter and
// every session holder that cannot move (promotion-drops.ts); walking the whole table for them
// took 80 ms at a million locks and 0.4 s at five million (on top of the peer timeout, before
// the new active serves), while such claims are usually few. Every claim on a standby comes
// through the replication sink, so the sink notes each lock it gave a waiter or a session holder
// since the table last started over: a superset of the locks the promotion must visit. An end
// or a leave that leaves a lock with neither takes it off again, so the set follows the live
// claims rather than the history.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

export class StreamClaims {
  private readonly locks = new Set<string>();
  /**
   * The table has changed only through the stream since it last started over (see take()).
   * Not before the first start-over: a node that came up and served on its own has a table the
   * stream never saw.
   */
  private fromStream = false;

  constructor(private readonly engine: LockEngine) {}

  /** The table started over (a snapshot begins, or this node follows another): nothing noted yet. */
  reset(): void {
    this.locks.clear();
    this.fromStream = true;
  }

  /** `lock` got a waiter or a session holder from the stream. */
  note(lock: string): void {
    this.locks.add(lock);
  }

  /** A claim of `lock` ended or left its queue: forgotten when no waiter and no session holder is left. */
  settle(lock: string): void {
    if (!this.locks.has(lock)) return;
    const l = this.engine.lock(lock);
    if (l === undefined || (l.head === null && (l.holder === null || l.holder.protocol !== 'session'))) this.locks.delete(lock);
  }

  /**
   * The noted locks, for a promotion; from then on the table is this node's own (it serves), so
   * later calls answer null (walk everything) until the table starts over again.
   */
  take(): ReadonlySet<string> | null {
    const noted = this.fromStream ? new Set(this.locks) : null;
    this.fromStream = false;
    this.locks.clear();
    return noted;
  }

  /** How many locks are noted (tests). */
  get size(): number {
    return this.locks.size;
  }
}
