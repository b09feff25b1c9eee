// One walk over the lock table, shared by the event streams that joined before it began: the
// table of a snapshot goes out in chunks (`event: locks`), each built once from the live engine
// in a few milliseconds at most, encoded once, and handed to every member that has room.
//
// Bounds. A chunk is built only when a member has taken what it was given (its queue is under
// LOW_WATER_BYTES): a stream that does not read costs about one chunk, not the table. A chunk
// stays in memory only until the slowest member has it; a member more than `maxBehind` bytes
// behind (chunks held for it here plus its own queue) is cut off, so a reader that stops cannot
// make the pass keep the table for it. Between two chunks the loop is free (the hub schedules
// the next one with setImmediate), so the lock path waits for one chunk at most.
//
// Consistency (the client side is lib/ops/dashboard-state.ts). Every member became a delta
// reader when the snapshot's header went out, before this walk built any chunk; each chunk
// shows its locks as they were when it was built. The client ignores a chunk's lock when a delta
// since the header named it (that delta, or a later one, is newer); for any other lock nothing
// changed since the header, so the chunk is right. The walk is a live Map iterator: a lock that
// stays is visited exactly once; one that comes or goes meanwhile is in a delta anyway.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockState } from '../../lib/engine/lock-state.ts';
import type { LockSummary, LocksChunkMessage } from '../../lib/ops/api-types.ts';
import type { FeedSubscriber } from '../daemon-facade.ts';
import { lockSummary, type ViewClock } from './lock-views.ts';

/** A stream takes the next chunk only when less than this is queued for it. */
export const LOW_WATER_BYTES = 256 * 1024;
/** Locks per chunk at most (about 230 KB of JSON with full holders). */
export const CHUNK_LOCKS = 1_000;
/** Loop time one chunk may take at most, checked every 64 locks. */
export const CHUNK_MS = 2;

export interface PassMember {
  readonly sub: FeedSubscriber;
  /** Index of the next chunk this member gets (the header's inline locks are chunk 0). */
  position: number;
}

export interface PassOptions {
  chunkLocks: number;
  chunkMs: number;
  /** Bytes a member may be behind before it is cut off. */
  maxBehind: number;
  /** A member gets the next chunk only with less than this queued (LOW_WATER_BYTES). */
  lowWater: number;
  now(): number;
}

const encoder = new TextEncoder();

export function encodeFrame(event: string, data: unknown): Uint8Array {
  // JSON.stringify escapes newlines inside strings, so the payload is always one data line.
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export class SnapshotPass {
  readonly members = new Set<PassMember>();
  /** Set by the hub while a pump is scheduled. */
  scheduled = false;
  private readonly iterator: Iterator<LockState>;
  private finished = false;
  /** chunks[i] is chunk number base + i; those below every member's position are let go. */
  private chunks: Uint8Array[] = [];
  private base = 1;
  private produced = 1;
  /** ends[k]: bytes of chunks 1..k together (ends[0] = 0), to tell how far behind a member is. */
  private readonly ends: number[] = [0];

  constructor(
    engine: Pick<LockEngine, 'allLocks'>,
    private readonly clock: ViewClock,
    private readonly opts: PassOptions,
  ) {
    this.iterator = engine.allLocks();
  }

  get done(): boolean {
    return this.finished;
  }

  /** The first chunk's locks, for the header; `done` tells whether the table ended with them. */
  first(): LockSummary[] {
    return this.take();
  }

  /**
   * Gives members what they have room for: held chunks first, then at most one new chunk.
   * Calls `slow` for members too far behind and `complete` for members that have the whole
   * table (both leave the pass). Returns whether another pump has work right away.
   */
  pump(slow: (m: PassMember) => void, complete: (m: PassMember) => void): boolean {
    for (const m of this.members) if (!this.catchUp(m)) slow(m);
    let wanting = false;
    for (const m of this.members) if (m.position === this.produced && this.hasRoom(m)) wanting = true;
    if (wanting && !this.finished) {
      const locks = this.take();
      const message: LocksChunkMessage = { locks, last: this.finished };
      const frame = encodeFrame('locks', message);
      this.chunks.push(frame);
      this.produced++;
      this.ends.push((this.ends.at(-1) as number) + frame.byteLength);
      for (const m of this.members) if (m.position === this.produced - 1 && this.hasRoom(m) && !this.give(m)) slow(m);
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

  /** Sends held chunks while the member has room; false when a send failed. */
  private catchUp(m: PassMember): boolean {
    while (m.position < this.produced && this.hasRoom(m)) if (!this.give(m)) return false;
    return true;
  }

  private give(m: PassMember): boolean {
    const frame = this.chunks[m.position - this.base] as Uint8Array;
    m.position++;
    try {
      return m.sub.send(frame);
    } catch {
      return false;
    }
  }

  /** The next locks of the walk: at most chunkLocks, and at most chunkMs of loop time. */
  private take(): LockSummary[] {
    const locks: LockSummary[] = [];
    const started = this.opts.now();
    while (locks.length < this.opts.chunkLocks) {
      const next = this.iterator.next();
      if (next.done === true) {
        this.finished = true;
        break;
      }
      locks.push(lockSummary(next.value, this.clock));
      if ((locks.length & 63) === 0 && this.opts.now() - started > this.opts.chunkMs) break;
    }
    return locks;
  }
}
