// One snapshot on its way to one standby, a slice per event-loop turn: the active never reads
// its whole table in one turn (a million locks took the loop for seconds, long enough for the
// freeze check to step the active out), and never holds a copy of it.
//
// The cursor is the engine's lock table iterator (lib/engine/lock-map.ts: one Map, or a first
// Map and shards, each read by its live iterator): a lock deleted before the cursor reaches it is
// skipped, a lock filed at the start and still filed is reached exactly once, and a lock added
// while the walk is under way (a new lock, or an idle one dropped and filed again) may be
// reached later or not, which the argument below allows. Each slice reads the locks it covers as they are at that turn, after the
// events of earlier turns have been sent (the source flushes before each slice), so on the link
// a part always follows every event that came before the state it carries.
//
// Why the standby ends with the active's table (proved by snapshot-stream.property.test.ts):
// the standby applies every event, also for locks the cursor has not reached, and a part
// REPLACES what the standby has for each lock it names. For a lock the cursor has passed, the
// standby had the active's state at that point and has applied every event since: equal, as in
// plain replication. A lock not reached yet is replaced when it is reached. A lock deleted before
// it is reached had, on the standby, only claims learned from events since the walk began (the
// table started over at `snapshot-begin`), and each of those claims' end was an event too, so
// the standby has nothing left for it either.
import type { Clock } from '../../lib/engine/clock.ts';
import type { Claim, LockState } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { SnapshotHolder, SnapshotWaiter } from '../../lib/cluster/peer-messages.ts';

/** How much one slice may do before the loop gets to run again (client I/O, timers, heartbeats). */
export interface WalkBudget {
  /** Milliseconds of encoding per turn. */
  ms: number;
  /** Characters of JSON per turn (a slice ends at the first lock boundary past it). */
  chars: number;
  /** The longest part line (SNAPSHOT_PART_CHARS unless a test says otherwise). */
  lineChars?: number;
}

/**
 * The longest part line: only a lock with a queue longer than this is cut inside itself (the
 * rest of it goes in the next line, in the same turn). Well under the 4 MiB peer line cap.
 */
export const SNAPSHOT_PART_CHARS = 1024 * 1024;

/**
 * 16 KiB parts (about 110 one-holder locks): a standby handles a line in one go, and its inbound
 * turn is about 2 ms (peer-link.ts), so a part had better fit in it on a busy host; 64 KiB parts
 * took it 3 ms and more, plus the garbage collection they set off.
 */
export const DEFAULT_WALK_BUDGET: WalkBudget = { ms: 1, chars: 16 * 1024 };

/** How often (in locks) a slice reads the clock. */
const CLOCK_EVERY = 32;

/** A holder as a snapshot carries it; its lease and time held count from `now`. */
export function holderEntry(lock: LockState, h: Claim, now: number): SnapshotHolder {
  const entry: SnapshotHolder = [
    lock.name,
    h.id,
    h.token.toString(),
    h.protocol,
    h.client,
    h.leaseMs,
    h.sliding,
    Math.max(0, h.expiresAt - now),
    Math.max(0, now - h.grantedAt),
  ];
  if (h.clientName !== null) entry.push(h.keyHash, h.clientName);
  else if (h.keyHash !== null) entry.push(h.keyHash);
  return entry;
}

/** A waiter as a snapshot carries it; its wait so far and wait left count from `now`. */
export function waiterEntry(lock: LockState, w: Claim, now: number): SnapshotWaiter {
  const remaining = w.waitDeadline === Number.POSITIVE_INFINITY ? null : Math.max(0, w.waitDeadline - now);
  const entry: SnapshotWaiter = [lock.name, w.id, w.protocol, w.client, w.leaseMs, w.sliding, Math.max(0, now - w.enqueuedAt), remaining];
  // A resumable waiter's lease left comes in the renewals line at the end of the snapshot.
  if (w.clientName !== null) entry.push(w.keyHash, w.clientName);
  else if (w.keyHash !== null) entry.push(w.keyHash);
  return entry;
}

/** JSON.stringify(holderEntry(lock, h, now)), written out without the array (less garbage for the active's GC). */
export function holderJson(lock: LockState, h: Claim, now: number): string {
  const head = `[${JSON.stringify(lock.name)},${h.id},"${h.token}","${h.protocol}",${JSON.stringify(h.client)},${h.leaseMs},${h.sliding},${num(Math.max(0, h.expiresAt - now))},${num(Math.max(0, now - h.grantedAt))}`;
  return `${head}${tail(h.keyHash, h.clientName)}]`;
}

/** JSON.stringify(waiterEntry(lock, w, now)), written out without the array. */
export function waiterJson(lock: LockState, w: Claim, now: number): string {
  const remaining = w.waitDeadline === Number.POSITIVE_INFINITY ? 'null' : num(Math.max(0, w.waitDeadline - now));
  const head = `[${JSON.stringify(lock.name)},${w.id},"${w.protocol}",${JSON.stringify(w.client)},${w.leaseMs},${w.sliding},${num(Math.max(0, now - w.enqueuedAt))},${remaining}`;
  return `${head}${tail(w.keyHash, w.clientName)}]`;
}

/** A number as JSON writes it (a non-finite one as null, as JSON.stringify does). */
const num = (n: number): string => (Number.isFinite(n) ? `${n}` : 'null');

/** The optional keyHash and clientName fields, as the entry functions above add them. */
function tail(keyHash: string | null, clientName: string | null): string {
  if (clientName !== null) return `,${keyHash === null ? 'null' : `"${keyHash}"`},${JSON.stringify(clientName)}`;
  return keyHash === null ? '' : `,"${keyHash}"`;
}

export class SnapshotWalk {
  /** Part lines sent so far (the end message names the count). */
  parts = 0;
  private readonly cursor: Iterator<LockState>;
  private readonly holders: string[] = [];
  private readonly waiters: string[] = [];
  private chars = 0;
  /** The lock the next line continues (its first entries went in the line before), as JSON. */
  private cont: string | null = null;
  private readonly lineChars: number;

  constructor(
    engine: LockEngine,
    private readonly clock: Clock,
    private readonly sendLine: (line: string) => void,
    private readonly budget: WalkBudget = DEFAULT_WALK_BUDGET,
  ) {
    this.cursor = engine.allLocks();
    this.lineChars = budget.lineChars ?? SNAPSHOT_PART_CHARS;
  }

  /**
   * Encodes and sends locks until the budget is spent, then returns: true when the whole table
   * has gone. A lock is never split across turns (a part is applied as it comes, and an event
   * in between would find a lock half there).
   */
  step(): boolean {
    const start = this.clock.now();
    for (let n = 1; ; n++) {
      const next = this.cursor.next();
      if (next.done === true) {
        this.cut(null);
        return true;
      }
      this.addLock(next.value, start);
      if (this.chars >= this.budget.chars || (n % CLOCK_EVERY === 0 && this.clock.now() - start >= this.budget.ms)) {
        this.cut(null);
        return false;
      }
    }
  }

  private addLock(lock: LockState, now: number): void {
    let first = true;
    if (lock.holder !== null) {
      this.add(this.holders, holderJson(lock, lock.holder, now), lock, first);
      first = false;
    }
    for (let w = lock.head; w !== null; w = w.next) {
      this.add(this.waiters, waiterJson(lock, w, now), lock, first);
      first = false;
    }
  }

  private add(list: string[], json: string, lock: LockState, first: boolean): void {
    // Only a lock's later entries can overflow a line it started in: the line goes, and the next one continues it.
    if (this.chars > 0 && this.chars + json.length >= this.lineChars) this.cut(first ? null : JSON.stringify(lock.name));
    list.push(json);
    this.chars += json.length + 1;
  }

  /** Sends the entries gathered so far (if any); `continues` is the lock the next line goes on with. */
  private cut(continues: string | null): void {
    if (this.holders.length === 0 && this.waiters.length === 0) return;
    const cont = this.cont === null ? '' : `"cont":${this.cont},`;
    this.sendLine(`{"t":"snapshot-part",${cont}"holders":[${this.holders.join(',')}],"waiters":[${this.waiters.join(',')}]}\n`);
    // Emptied in place: add() holds on to the list it is adding to.
    this.holders.length = 0;
    this.waiters.length = 0;
    this.chars = 0;
    this.cont = continues;
    this.parts++;
  }
}
