// The standby side of replication: installs the active's snapshot into this node's engine
// (a mirror that never advances on its own clock) and applies the event stream in order.
// Leases count from when this node reads them, so a replicated lease never ends earlier here
// than on the active. A batch that does not parse is a broken stream: the caller re-syncs.
import type { Protocol } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { HandoverCause } from '../../lib/engine/lock-state.ts';
import { KEY_HASH, type SnapshotHolder, type SnapshotMessage, type SnapshotPartMessage, type SnapshotWaiter } from '../../lib/cluster/peer-messages.ts';

/**
 * Parts one snapshot may have. The source cuts them at about 1 MiB (SNAPSHOT_PART_CHARS), so
 * this is about 1 GiB of lock table (some 7 million locks); with the 4 MiB line cap, what a
 * peer can make a standby hold for one snapshot it asked for is bounded by it.
 */
export const MAX_SNAPSHOT_PARTS = 1024;

interface IncomingSnapshot {
  readonly from: string;
  readonly holders: SnapshotHolder[];
  readonly waiters: SnapshotWaiter[];
  parts: number;
}

export class ReplicationSink {
  appliedSeq = 0;
  /** Highest token seen in the stream (grants may be newer than the last ceiling message). */
  maxToken = 0n;
  /** The parts of the snapshot this node asked for, as they come; null when it is not waiting for one. */
  private incoming: IncomingSnapshot | null = null;

  constructor(private readonly engine: LockEngine) {}

  /** This node asked `from` for a snapshot: its parts are taken from now on (a new request starts over). */
  expectSnapshot(from: string): void {
    this.incoming = { from, holders: [], waiters: [], parts: 0 };
  }

  /** The link to `from` is gone: the parts so far are dropped. */
  dropSnapshot(from: string): void {
    if (this.incoming?.from === from) this.incoming = null;
  }

  /**
   * One part from `from`: false when this node is not waiting for a snapshot from it (the part
   * is not kept); throws past MAX_SNAPSHOT_PARTS (the link is then closed).
   */
  addPart(from: string, m: SnapshotPartMessage): boolean {
    const s = this.incoming;
    if (s === null || s.from !== from) return false;
    if (++s.parts > MAX_SNAPSHOT_PARTS) {
      this.incoming = null;
      throw new Error(`snapshot of more than ${MAX_SNAPSHOT_PARTS} parts`);
    }
    for (const h of m.holders) s.holders.push(h);
    for (const w of m.waiters) s.waiters.push(w);
    return true;
  }

  /**
   * The end of the snapshot from `from`: the whole of it (its parts' entries before its own),
   * or null when it was not asked for or parts are missing.
   */
  finishSnapshot(from: string, end: SnapshotMessage): SnapshotMessage | null {
    const s = this.incoming;
    if (s === null || s.from !== from) return null;
    this.incoming = null;
    if (s.parts !== end.parts) return null;
    for (const h of end.holders) s.holders.push(h);
    for (const w of end.waiters) s.waiters.push(w);
    return { ...end, holders: s.holders, waiters: s.waiters };
  }

  applySnapshot(m: SnapshotMessage): void {
    this.engine.reset();
    for (const [lock, claimId, token, protocol, client, leaseMs, sliding, remainingMs, heldForMs, keyHash] of m.holders) {
      const t = BigInt(token);
      if (t > this.maxToken) this.maxToken = t;
      this.engine.replicaGrant({ lock, claimId, token: t, protocol, client, leaseMs, sliding, remainingMs, heldForMs, handoverMs: null, handoverCause: null, keyHash: sessionKey(protocol, keyHash) }, false);
    }
    for (const [lock, claimId, protocol, client, leaseMs, sliding, waitingForMs, waitRemainingMs, keyHash] of m.waiters) {
      this.engine.replicaEnqueue({ lock, claimId, protocol, client, leaseMs, sliding, waitingForMs, waitRemainingMs, keyHash: sessionKey(protocol, keyHash) }, false);
    }
    const high = BigInt(m.highWater);
    if (high > this.maxToken) this.maxToken = high;
    this.appliedSeq = m.seq;
  }

  /**
   * Applies one `ev` batch; throws on a malformed event, or a grant whose token is above
   * `maxToken` (more than a block above anything this node has seen: see ceiling-guard.ts).
   * The stream is then re-synced.
   */
  applyBatch(seq: number, events: unknown[][], maxToken: bigint): void {
    for (const e of events) this.apply(e, maxToken);
    this.appliedSeq = seq;
  }

  /** The active's coalesced renewals of resumable sessions: each lease now ends remainingMs from now. */
  applyRenewals(renewals: number[]): void {
    for (let i = 0; i + 1 < renewals.length; i += 2) this.engine.replicaRenewResumable(renewals[i] as number, renewals[i + 1] as number);
  }

  private apply(e: unknown[], maxToken: bigint): void {
    const lock = str(e[1]);
    const claimId = num(e[2]);
    switch (e[0]) {
      case 'g': {
        const token = BigInt(str(e[3]));
        if (token > maxToken) throw new Error(`replicated grant with token ${token} above the bound ${maxToken}`);
        if (token > this.maxToken) this.maxToken = token;
        const leaseMs = num(e[6]);
        this.engine.replicaGrant({
          lock, claimId, token, protocol: proto(e[4]), client: str(e[5]), leaseMs, sliding: e[7] === true,
          remainingMs: leaseMs, heldForMs: 0, handoverMs: e[8] === null ? null : num(e[8]), handoverCause: e[9] === null ? null : (str(e[9]) as HandoverCause),
          keyHash: e[4] === 'session' ? optionalHash(e[10]) : null,
        });
        return;
      }
      case 'r':
        this.engine.replicaEndHolder(lock, claimId, e[3] === 'disconnect' ? 'disconnect' : 'release');
        return;
      case 'x':
        this.engine.replicaEndHolder(lock, claimId, 'expire');
        return;
      case 'f':
        this.engine.replicaEndHolder(lock, claimId, 'force-release');
        return;
      case 'q': {
        // A resumable session's enqueue carries its lease and key hash; others have neither.
        const keyHash = e[3] === 'session' ? optionalHash(e[7]) : null;
        this.engine.replicaEnqueue({
          lock, claimId, protocol: proto(e[3]), client: str(e[4]), leaseMs: keyHash === null ? 0 : num(e[6]), sliding: e[3] === 'session',
          waitingForMs: 0, waitRemainingMs: e[5] === null ? null : num(e[5]), keyHash,
        });
        return;
      }
      case 'l': {
        const reason = e[3] === 'timeout' || e[3] === 'expired' ? e[3] : 'disconnect';
        this.engine.replicaLeaveQueue(lock, claimId, reason);
        return;
      }
      case 'k':
        this.engine.replicaLeaveQueue(lock, claimId, 'kick');
        return;
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
  if (v === undefined) return null;
  if (typeof v !== 'string' || !KEY_HASH.test(v)) throw new Error('replicated event: expected a claim key hash');
  return v;
}

/** Only session claims are resumable; a hash on anything else is ignored. */
function sessionKey(protocol: Protocol, keyHash: string | undefined): string | null {
  return protocol === 'session' && keyHash !== undefined ? keyHash : null;
}

function proto(v: unknown): Protocol {
  if (v !== 'keyed' && v !== 'session') throw new Error('replicated event: expected a protocol');
  return v;
}
