// The standby side of replication: takes the active's streamed snapshot into this node's
// engine (a mirror that never advances on its own clock) part by part as it comes, and applies
// the event stream in order, alongside the parts and after them (snapshot-walk.ts says why
// the two together give the active's table). Leases count from when this node reads them, so
// a replicated lease never ends earlier here than on the active. A batch or part that does not
// parse is a broken stream: the caller re-syncs.
import type { HandoverCause, Protocol } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { isValidClientName } from '../../lib/protocol/client-name.ts';
import { StreamClaims } from './stream-claims.ts';
import { StringIntern } from './intern-strings.ts';
import { TableClear } from './table-clear.ts';
import { KEY_HASH, type SnapshotBeginMessage, type SnapshotHolder, type SnapshotMessage, type SnapshotWaiter } from '../../lib/cluster/peer-messages.ts';

interface IncomingSnapshot {
  readonly from: string;
  /** `snapshot-begin` has come: the table here is the one being streamed. */
  begun: boolean;
  parts: number;
}

/** What a part or the end carries, in the wire's shape. */
interface SnapshotEntries {
  cont?: string | undefined;
  holders: SnapshotHolder[];
  waiters: SnapshotWaiter[];
}

export class ReplicationSink {
  appliedSeq = 0;
  /** Highest token seen in the stream (grants may be newer than the last ceiling message). */
  maxToken = 0n;
  /** The snapshot this node asked for; null when it is not waiting for one. */
  private incoming: IncomingSnapshot | null = null;
  /**
   * Locks an event named since the snapshot under way began: only these can be on this node
   * before their part comes (the table started empty; a lock walked twice, dropped and filed
   * again on the active in between, was dropped here by an event too). Any other lock in a part
   * is new here, and clearing it first was a lookup in a table of millions per lock (a quarter
   * of the standby's time applying a snapshot).
   */
  private readonly touched = new Set<string>();
  /** The locks given a waiter or a session holder, for a promotion (stream-claims.ts). */
  readonly claims: StreamClaims;
  /** Empties the mirror a slice per turn before a sync is asked for (table-clear.ts). */
  private readonly clear: TableClear;
  /** The client ids and names a snapshot repeats, one string each (intern-strings.ts). */
  private readonly intern = new StringIntern();

  constructor(private readonly engine: LockEngine) {
    this.claims = new StreamClaims(engine);
    this.clear = new TableClear(engine);
  }

  /**
   * Empties this node's mirror, then calls `then` (which asks for the snapshot): a large table a
   * slice per turn (table-clear.ts), so that starting over never holds the loop for seconds.
   */
  clearThen(then: (slices: number) => void): void {
    this.clear.clearThen((slices) => {
      this.claims.reset();
      this.touched.clear();
      then(slices);
    });
  }

  /** A clear is under way: no snapshot is taken before it ends. */
  get clearing(): boolean {
    return this.clear.clearing;
  }

  /** This node takes the role with its table as it is: a clear under way stops. */
  cancelClear(): void {
    this.clear.cancel();
  }

  /** This node asked `from` for a snapshot: the next one it begins is taken (a new request starts over). */
  expectSnapshot(from: string): void {
    this.incoming = { from, begun: false, parts: 0 };
  }

  /** The link to `from` is gone: the snapshot under way from it ends here (the table stays partial, and not in sync). */
  dropSnapshot(from: string): void {
    if (this.incoming?.from !== from) return;
    this.incoming = null;
    this.touched.clear();
  }

  /** Whether a snapshot from `from` has begun and not ended (its events are then applied). */
  receiving(from: string): boolean {
    return this.incoming?.from === from && this.incoming.begun;
  }

  /**
   * The start of the snapshot this node asked `from` for: the table here starts over (whatever
   * an earlier snapshot left half done goes too) and follows the stream from `seq`. False, and
   * nothing changes, when it was not asked for.
   */
  beginSnapshot(from: string, m: SnapshotBeginMessage): boolean {
    const s = this.incoming;
    // While the table is being cleared it answers an older request: the one asked after the clear comes next.
    if (s === null || s.from !== from || this.clear.clearing) return false;
    s.begun = true;
    s.parts = 0;
    // Made for the table coming: a Map of millions grown one doubling at a time copied all its
    // entries in one call at each (lib/engine/lock-map.ts: half a second at 4 M locks).
    this.engine.reset(m.locks ?? 0);
    this.claims.reset();
    this.touched.clear();
    const high = BigInt(m.highWater);
    if (high > this.maxToken) this.maxToken = high;
    this.appliedSeq = m.seq;
    return true;
  }

  /** One part from `from`, applied now: false (nothing applied) when no snapshot from it is under way. */
  applyPart(from: string, m: SnapshotEntries): boolean {
    const s = this.incoming;
    if (s === null || s.from !== from || !s.begun) return false;
    s.parts++;
    this.install(m);
    return true;
  }

  /**
   * The end of the snapshot from `from`: true when this node now has the active's table (every
   * part came, and every event up to `seq`); false when it was not under way or something is
   * missing (the caller asks again).
   */
  finishSnapshot(from: string, end: SnapshotMessage): boolean {
    const s = this.incoming;
    if (s === null || s.from !== from || !s.begun) return false;
    this.incoming = null;
    if (s.parts !== end.parts || this.appliedSeq !== end.seq) {
      this.touched.clear();
      return false;
    }
    this.install(end);
    this.touched.clear();
    // Listeners (the dashboard, metrics) saw a reset at the start and none of the parts: re-read all.
    this.engine.replicaAnnounceReset();
    this.intern.clear();
    return true;
  }

  /** A part's locks replace what this node has for them (events may have left part of a lock here). */
  private install(m: SnapshotEntries): void {
    const kept = m.cont;
    const touched = this.touched;
    if (touched.size > 0) {
      for (const h of m.holders) if (h[0] !== kept && touched.has(h[0])) this.engine.replicaClearLock(h[0]);
      for (const w of m.waiters) if (w[0] !== kept && touched.has(w[0])) this.engine.replicaClearLock(w[0]);
    }
    const intern = this.intern;
    for (const [lock, claimId, token, protocol, client, leaseMs, sliding, remainingMs, heldForMs, keyHash, clientName] of m.holders) {
      const t = BigInt(token);
      if (t > this.maxToken) this.maxToken = t;
      if (protocol === 'session') this.claims.note(lock);
      this.engine.replicaGrant(
        {
          lock,
          claimId,
          token: t,
          protocol,
          client: intern.get(client),
          clientName: clientName === undefined ? null : intern.get(clientName),
          leaseMs,
          sliding,
          remainingMs,
          heldForMs,
          handoverMs: null,
          handoverCause: null,
          keyHash: sessionKey(protocol, keyHash),
        },
        false,
      );
    }
    for (const [lock, claimId, protocol, client, leaseMs, sliding, waitingForMs, waitRemainingMs, keyHash, clientName] of m.waiters) {
      const name = clientName === undefined ? null : intern.get(clientName);
      this.claims.note(lock);
      this.engine.replicaEnqueue(
        {
          lock,
          claimId,
          protocol,
          client: intern.get(client),
          clientName: name,
          leaseMs,
          sliding,
          waitingForMs,
          waitRemainingMs,
          keyHash: sessionKey(protocol, keyHash),
        },
        false,
      );
    }
  }

  /**
   * Applies one `ev` batch; throws on a malformed event, or a grant whose token is above
   * `maxToken` (more than one reservation above anything this node has seen: see ceiling-guard.ts).
   * The stream is then re-synced.
   */
  applyBatch(seq: number, events: unknown[][], maxToken: bigint): void {
    const snapshotting = this.incoming?.begun === true;
    for (const e of events) {
      const lock = this.apply(e, maxToken);
      if (snapshotting) this.touched.add(lock);
    }
    this.appliedSeq = seq;
  }

  /** The active's coalesced renewals of resumable sessions: each lease now ends remainingMs from now. */
  applyRenewals(renewals: number[]): void {
    for (let i = 0; i + 1 < renewals.length; i += 2) {
      const id = renewals[i];
      const remainingMs = renewals[i + 1];
      if (id === undefined || remainingMs === undefined) break; // i + 1 < length: never
      this.engine.replicaRenewResumable(id, remainingMs);
    }
  }

  /** Applies one event; returns the lock it names. */
  private apply(e: unknown[], maxToken: bigint): string {
    const lock = str(e[1]);
    const claimId = num(e[2]);
    switch (e[0]) {
      case 'g': {
        const token = BigInt(str(e[3]));
        if (token > maxToken) throw new Error(`replicated grant with token ${token} above the bound ${maxToken}`);
        if (token > this.maxToken) this.maxToken = token;
        const leaseMs = num(e[6]);
        if (e[4] === 'session') this.claims.note(lock);
        this.engine.replicaGrant({
          lock,
          claimId,
          token,
          protocol: proto(e[4]),
          client: str(e[5]),
          clientName: optionalName(e[11]),
          leaseMs,
          sliding: e[7] === true,
          remainingMs: leaseMs,
          heldForMs: 0,
          handoverMs: e[8] === null ? null : num(e[8]),
          handoverCause: e[9] === null ? null : handoverCause(e[9]),
          keyHash: e[4] === 'session' ? optionalHash(e[10]) : null,
        });
        return lock;
      }
      case 'r':
        this.engine.replicaEndHolder(lock, claimId, e[3] === 'disconnect' ? 'disconnect' : 'release');
        this.claims.settle(lock);
        return lock;
      case 'x':
        this.engine.replicaEndHolder(lock, claimId, 'expire');
        this.claims.settle(lock);
        return lock;
      case 'f':
        this.engine.replicaEndHolder(lock, claimId, 'force-release');
        this.claims.settle(lock);
        return lock;
      case 'q': {
        // A resumable session's enqueue carries its lease and key hash; others have neither.
        const keyHash = e[3] === 'session' ? optionalHash(e[7]) : null;
        this.claims.note(lock);
        this.engine.replicaEnqueue({
          lock,
          claimId,
          protocol: proto(e[3]),
          client: str(e[4]),
          clientName: optionalName(e[8]),
          leaseMs: keyHash === null ? 0 : num(e[6]),
          sliding: e[3] === 'session',
          waitingForMs: 0,
          waitRemainingMs: e[5] === null ? null : num(e[5]),
          keyHash,
        });
        return lock;
      }
      case 'l': {
        const reason = e[3] === 'timeout' || e[3] === 'expired' ? e[3] : 'disconnect';
        this.engine.replicaLeaveQueue(lock, claimId, reason);
        this.claims.settle(lock);
        return lock;
      }
      case 'k':
        this.engine.replicaLeaveQueue(lock, claimId, 'kick');
        this.claims.settle(lock);
        return lock;
      default:
        throw new Error(`unknown replicated event ${JSON.stringify(e[0])}`);
    }
  }
}

function str(v: unknown): string {
  if (typeof v !== 'string') throw new Error('replicated event: expected a string');
  return v;
}

function num(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error('replicated event: expected a number');
  return v;
}

/** A replicated claim key hash (64 lower-case hex digits), or null when absent. */
function optionalHash(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !KEY_HASH.test(v)) throw new Error('replicated event: expected a claim key hash');
  return v;
}

/** A replicated client identity (lib/protocol/client-name.ts), or null when absent. */
function optionalName(v: unknown): string | null {
  if (v === undefined) return null;
  if (typeof v !== 'string' || !isValidClientName(v)) throw new Error('replicated event: expected a client identity');
  return v;
}

/** Only session claims are resumable; a hash on anything else is ignored. */
function sessionKey(protocol: Protocol, keyHash: string | null | undefined): string | null {
  return protocol === 'session' && keyHash !== undefined ? keyHash : null;
}

/** Why a replicated grant's lock changed hands (lib/engine/claim.ts); anything else is a broken stream. */
function handoverCause(v: unknown): HandoverCause {
  if (v !== 'release' && v !== 'disconnect' && v !== 'expiry' && v !== 'force-release') throw new Error('replicated event: expected a handover cause');
  return v;
}

function proto(v: unknown): Protocol {
  if (v !== 'keyed' && v !== 'session') throw new Error('replicated event: expected a protocol');
  return v;
}
