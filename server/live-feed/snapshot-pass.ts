// One walk over the lock table, shared by the event streams that joined before it began: the
// table of a snapshot goes out in chunks (`event: locks`), each built and encoded once from the
// live engine, and handed to every member that has room.
//
// Loop time. A chunk is encoded lock by lock (each summary turned into JSON as it is read) and
// ends when it holds CHUNK_LOCKS locks, about CHUNK_BYTES of JSON, or CHUNK_MS of loop time
// (building and encoding counted together, checked every CHECK_EVERY locks), whichever comes
// first. Encoding a 1,000-lock page in one piece after building it took several ms per turn at
// 100,000 locks, on the lock path's time (canary p99 7-90 ms with 50 non-reading streams).
//
// Bounds. A chunk is built only when a member has taken what it was given (its queue is under
// LOW_WATER_BYTES): a stream that does not read costs about one chunk, not the table. A chunk
// stays in memory only until the slowest member has it; a member more than `maxBehind` bytes
// behind (chunks held for it here plus its own queue) is cut off, so a reader that stops cannot
// make the pass keep the table for it. Between two chunks the loop is free (the hub schedules
// the next pump with setImmediate), and one turn builds one chunk and hands out SEND_BYTES over
// all passes together (TurnBudget), so the lock path waits for one chunk at most, however many
// passes streams joining at different times have started.
//
// The header's page (headByName). The header carries the table's first locks in name order,
// the dashboard's default order, so a page shows its first rows correct from the header on; the
// walk then leaves them out. They are found by one pass over the names with a bounded sorted
// buffer (a comparison per name, an insert for the few that beat the buffer's last), in the turn
// that sends the header: no index kept current on the lock path for it, at the price of
// O(n) comparisons per snapshot (shared by the streams that joined it), so only for tables up to
// HEAD_SCAN_MAX_LOCKS (the hub decides).
//
// Consistency (the client side is lib/dashboard/dashboard-state.ts). Every member became a delta
// reader when the snapshot's header went out, before this walk built any chunk; each chunk
// shows its locks as they were when it was built. The client ignores a chunk's lock when a delta
// since the header named it (that delta, or a later one, is newer); for any other lock nothing
// changed since the header, so the chunk is right. The walk is a live Map iterator: a lock that
// stays is visited exactly once; one that comes or goes meanwhile is in a delta anyway.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockState } from '../../lib/engine/claim.ts';
import type { LocksChunkMessage } from '../../lib/ops-api/api-types.ts';
import type { FeedSubscriber } from '../../lib/ops-api/daemon-facade.ts';
import { lockSummary, type ViewClock } from '../lock-views/lock-views.ts';
import { firstIndexWhere } from '../../lib/binary-search.ts';

/** Locks per chunk at most (about 230 KB of JSON with full holders). */
export const CHUNK_LOCKS = 1_000;
/** JSON per chunk at most, in UTF-16 code units (bytes for ASCII names; a lock's JSON may overshoot it once). */
export const CHUNK_BYTES = 48 * 1024;
/** Loop time one chunk may take at most, building and encoding together. */
export const CHUNK_MS = 1;
/** Bytes of chunks one pump hands out at most, over all members: about three writes of a full chunk. */
export const SEND_BYTES = 128 * 1024;
/** Locks between two looks at the clock while a chunk is built. */
export const CHECK_EVERY = 16;
/**
 * Locks in the snapshot header, the table's first in name order: a screen of rows and a few
 * screens more (about 26 KB of JSON with full holders).
 */
export const HEAD_LOCKS = 100;
/**
 * Tables up to this size get their header's locks by name. The pass over the names is one loop
 * turn: a header by name took 0.87 ms at 10,000 locks, 2.1 ms at 20,000 and 7.2 ms at 100,000
 * (the walk's first page: 0.3-0.4 ms), so a larger table gets the walk's first page instead,
 * and the dashboard shows it as a table still loading.
 */
export const HEAD_SCAN_MAX_LOCKS = 15_000;

/**
 * What one loop turn may still spend on snapshot pages, over every pass at once (the hub makes
 * one per turn and hands it to each pass it pumps): streams that joined at different times are
 * in different passes, and a budget per pass let each of them build a page and hand out
 * SEND_BYTES in the same turn (100 streams reconnecting every 1.5 s: lock path p50 12.5 ms).
 */
export interface TurnBudget {
  /** Bytes of pages still to hand out this turn (at least one page goes out while above 0). */
  bytes: number;
  /** Pages that may still be built this turn. */
  builds: number;
}

/** Pages built per turn, over all passes. */
export const BUILDS_PER_TURN = 1;

export interface PassMember {
  readonly sub: FeedSubscriber;
  /** Index of the next chunk this member gets (the header's inline locks are chunk 0). */
  position: number;
}

export interface PassOptions {
  chunkLocks: number;
  chunkBytes: number;
  chunkMs: number;
  /** Bytes one pump hands out at most, over all members (at least one chunk goes out). */
  sendBytes: number;
  /** Bytes a member may be behind before it is cut off. */
  maxBehind: number;
  /** A member gets the next chunk only with less than this queued (LOW_WATER_BYTES). */
  lowWater: number;
  now(): number;
  /**
   * When above 0, first() gives the table's first this many locks in name order (HEAD_LOCKS)
   * and the walk leaves them out; 0: first() is the walk's first chunk.
   */
  headByName?: number;
}

const encoder = new TextEncoder();

export function encodeFrame(event: string, data: unknown): Uint8Array {
  // JSON.stringify escapes newlines inside strings, so the payload is always one data line.
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Locks already turned into JSON, one string each, taken from the walk in one slice. */
export interface EncodedLocks {
  readonly json: string[];
}

/**
 * The frame of `data` with a `locks` array made of `locks` (already JSON) as its first field:
 * the same message as encodeFrame(event, { locks, ...data }) once parsed.
 */
export function encodeFrameWithLocks(event: string, locks: EncodedLocks, data: object): Uint8Array {
  const rest = JSON.stringify(data);
  // rest is an object's JSON: `{}` or `{"a":...}`; what follows its `{` joins the locks field.
  const tail = rest === '{}' ? '}' : `,${rest.slice(1)}`;
  return encoder.encode(`event: ${event}\ndata: {"locks":[${locks.json.join(',')}]${tail}\n\n`);
}

/**
 * `M`: what the owner keeps per member (the hub's streams): the pass hands the same objects back
 * to `pump`'s callbacks, so the owner gets its own type back without a cast.
 */
export class SnapshotPass<M extends PassMember = PassMember> {
  readonly members = new Set<M>();
  private readonly iterator: Iterator<LockState>;
  /** Names the header carried (first() by name): the walk skips them. */
  private head: ReadonlySet<string> | null = null;
  private finished = false;
  /** chunks[i] is chunk number base + i; those below every member's position are let go. */
  private chunks: Uint8Array[] = [];
  private base = 1;
  private produced = 1;
  /** ends[k]: bytes of chunks 1..k together (ends[0] = 0), to tell how far behind a member is. */
  private readonly ends: number[] = [0];
  /** The turn's budget while a pump runs; pumps so far (where the next one starts serving). */
  private budget: TurnBudget = { bytes: 0, builds: 0 };
  private pumps = 0;

  constructor(
    private readonly engine: Pick<LockEngine, 'allLocks'>,
    private readonly clock: ViewClock,
    private readonly opts: PassOptions,
  ) {
    this.iterator = engine.allLocks();
  }

  get done(): boolean {
    return this.finished;
  }

  /** Whether first() gave the table's first locks in name order (headByName). */
  get firstByName(): boolean {
    return (this.opts.headByName ?? 0) > 0;
  }

  /**
   * The header's locks (JSON): the table's first headByName locks in name order when that is
   * set, else the walk's first chunk. `done` tells whether the table ended with them.
   */
  first(): EncodedLocks {
    const count = this.opts.headByName ?? 0;
    return count > 0 ? this.firstByNames(count) : this.take();
  }

  /**
   * The first `count` locks in code-unit order of their names, from one pass over the table:
   * a sorted buffer of at most `count` locks, which a lock enters only when its name sorts
   * before the buffer's last (one comparison for most names).
   */
  private firstByNames(count: number): EncodedLocks {
    const best: LockState[] = [];
    let seen = 0;
    for (const lock of this.engine.allLocks()) {
      seen++;
      const name = lock.name;
      if (best.length === count && name >= (best[count - 1] as LockState).name) continue;
      best.splice(
        firstIndexWhere(best.length, (i) => (best[i] as LockState).name >= name),
        0,
        lock,
      );
      if (best.length > count) best.pop();
    }
    this.head = new Set(best.map((l) => l.name));
    // Every lock of the table is in the header: nothing left to walk.
    if (seen <= count) this.finished = true;
    return { json: best.map((l) => JSON.stringify(lockSummary(l, this.clock))) };
  }

  /**
   * Gives members what they have room for: held chunks first, then a new chunk if the turn may
   * still build one, within the turn's bytes (`turn`, shared with the other passes the hub pumps
   * in this turn; a fresh one of sendBytes and one build when not given): each handed-out chunk
   * is a socket write further down, so fifty streams taking a chunk each in one turn held the
   * loop for milliseconds. Members are served starting one further each pump, so a budget that
   * runs out does not always leave the same ones waiting. Calls `slow` for members too far
   * behind and `complete` for members that have the whole table (both leave the pass). Returns
   * whether another pump has work right away.
   */
  pump(slow: (m: M) => void, complete: (m: M) => void, turn?: TurnBudget): boolean {
    const all = [...this.members];
    const start = all.length === 0 ? 0 : this.pumps++ % all.length;
    const order = [...all.slice(start), ...all.slice(0, start)];
    this.budget = turn ?? { bytes: this.opts.sendBytes, builds: BUILDS_PER_TURN };
    for (const m of order) if (!this.catchUp(m)) slow(m);
    let wanting = false;
    for (const m of this.members) if (m.position === this.produced && this.hasRoom(m)) wanting = true;
    if (wanting && !this.finished && this.budget.bytes > 0 && this.budget.builds > 0) {
      this.budget.builds--;
      const locks = this.take();
      const rest: Omit<LocksChunkMessage, 'locks'> = { last: this.finished };
      const frame = encodeFrameWithLocks('locks', locks, rest);
      this.chunks.push(frame);
      this.produced++;
      this.ends.push((this.ends.at(-1) as number) + frame.byteLength);
      for (const m of order) {
        if (this.budget.bytes <= 0) break;
        if (this.members.has(m) && m.position === this.produced - 1 && this.hasRoom(m) && !this.give(m)) slow(m);
      }
    }
    let min = this.produced;
    let more = false;
    for (const m of this.members) {
      if (this.finished && m.position === this.produced) {
        complete(m);
        continue;
      }
      const behind = (this.ends[this.produced - 1] as number) - (this.ends[m.position - 1] as number) + m.sub.queuedBytes();
      if (behind > this.opts.maxBehind) {
        slow(m);
        continue;
      }
      min = Math.min(min, m.position);
      if (this.hasRoom(m)) more = true;
    }
    // Chunks every remaining member already has are let go.
    if (min > this.base) {
      this.chunks.splice(0, min - this.base);
      this.base = min;
    }
    return more && this.members.size > 0;
  }

  private hasRoom(m: PassMember): boolean {
    return m.sub.queuedBytes() < this.opts.lowWater;
  }

  /** Sends held chunks while the member has room and the pump has budget; false when a send failed. */
  private catchUp(m: M): boolean {
    if (!this.members.has(m)) return true; // cut off earlier in this pump
    while (m.position < this.produced && this.hasRoom(m) && this.budget.bytes > 0) if (!this.give(m)) return false;
    return true;
  }

  private give(m: PassMember): boolean {
    const frame = this.chunks[m.position - this.base];
    // Callers give only below `produced`, and chunks at or above every member's position are kept.
    if (frame === undefined) throw new RangeError(`chunk ${m.position} is not held (held from ${this.base})`);
    m.position++;
    this.budget.bytes -= frame.byteLength;
    try {
      return m.sub.send(frame);
    } catch {
      return false;
    }
  }

  /**
   * The next locks of the walk, as JSON: at most chunkLocks, ending after the lock that takes
   * the JSON to chunkBytes, or after the CHECK_EVERY-th lock that finds chunkMs spent.
   */
  private take(): EncodedLocks {
    const json: string[] = [];
    const started = this.opts.now();
    let size = 0;
    const head = this.head;
    while (json.length < this.opts.chunkLocks && size < this.opts.chunkBytes) {
      const next = this.iterator.next();
      if (next.done === true) {
        this.finished = true;
        break;
      }
      // The header showed it as it was then; a change since is in a delta.
      if (head?.has(next.value.name) === true) continue;
      const one = JSON.stringify(lockSummary(next.value, this.clock));
      json.push(one);
      size += one.length + 1;
      if (json.length % CHECK_EVERY === 0 && this.opts.now() - started >= this.opts.chunkMs) break;
    }
    return { json };
  }
}
