// One session-protocol connection: one claim on one lock for the life of the connection.
// The first line asks (ACQUIRE), every later byte is a sign of life that restarts the sliding
// lease, and closing the connection is the release. The engine pushes the grant here
// (onGranted) when the lock is handed over, and ends the session here (onEnded) on lease
// expiry or an admin's action; each end sends one ERROR line and closes.
//
// A session that sent a claim key (ACQUIRE with a third field) is resumable: when its node hands
// the active role on, the claim moves with the lock table and this connection says `MOVED`
// instead of ending it; a connection whose first line is `RESUME <name> <key>` takes up such a
// claim on the node that now has it (see docs/protocol.md, "Resumable sessions").
import { hash } from 'node:crypto';
import type { Claim, ClaimOwner, EndReason } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { TokensUnavailable } from '../../lib/tokens/token-source.ts';
import { BETWEEN_CONNECTIONS } from '../../lib/engine/carried-claims.ts';
import { ERRORS } from '../../lib/errors.ts';
import {
  ACQUIRE_TWICE,
  CLIENT_TOO_LATE,
  EXPECTED_ACQUIRE,
  EXPECTED_HEARTBEAT,
  SESSION_GOODBYE,
  encodeAcquired,
  encodeMoved,
  encodeSessionRedirect,
  encodeSessionError,
  encodeWaiting,
  parseSessionRequest,
} from '../../lib/protocol/session-codec.ts';
import { LineConnection, type ConnectionContext } from './line-connection.ts';
import type { LineTransport } from './line-transport.ts';
import type { Route } from './routing.ts';

export { SESSION_GOODBYE, SESSION_REFUSAL } from '../../lib/protocol/session-codec.ts';

// Every last line is known in advance; only ACQUIRED and WAITING carry numbers.
const LINE_TOO_LONG = encodeSessionError('protocol-error', ERRORS['line-too-long'].message);
const NO_ACQUIRE_YET = encodeSessionError('protocol-error', EXPECTED_ACQUIRE);
const NOT_A_HEARTBEAT = encodeSessionError('protocol-error', EXPECTED_HEARTBEAT);
const SECOND_ACQUIRE = encodeSessionError('protocol-error', ACQUIRE_TWICE);
const LATE_CLIENT = encodeSessionError('protocol-error', CLIENT_TOO_LATE);
const IO_TIMEOUT_LINE = encodeSessionError('io-timeout', 'line not finished in time');
const IO_TIMEOUT_FIRST = encodeSessionError('io-timeout', 'no ACQUIRE in time');
const LEASE_EXPIRED = encodeSessionError('lease-expired');
const FORCE_RELEASED = encodeSessionError('force-released');
const KICKED = encodeSessionError('kicked');
const TOKENS_EXHAUSTED = encodeSessionError('tokens-exhausted');
const STORAGE_UNAVAILABLE = encodeSessionError('storage-unavailable');
// A claim that ended without this connection being told (no path does today; see onLine).
const CLAIM_GONE = encodeSessionError('server-going-away', 'the claim ended on the server');
const CLAIM_UNKNOWN = encodeSessionError('claim-unknown');

/**
 * What the server keeps of a claim key: its SHA-256, never the key. The one-shot crypto.hash
 * makes no Hash object per ACQUIRE (here 238 ns against 735 ns for createHash); a claim key is
 * hex (session-codec.ts), so its UTF-8 bytes are its latin1 bytes.
 */
export function claimKeyHash(claimKey: string): string {
  return hash('sha256', claimKey, 'hex');
}

export class SessionConnection extends LineConnection implements ClaimOwner {
  /** The connection's one claim, from its ACQUIRE on; kept after it ends. */
  private claim: Claim | null = null;
  /** `ACQUIRED <token>` of the current grant: the answer to every heartbeat while holding. */
  private acquiredLine = '';
  /** The identity from a `CLIENT` line before the ACQUIRE, or null. */
  private clientName: string | null = null;

  constructor(
    transport: LineTransport,
    ctx: ConnectionContext,
    private readonly engine: LockEngine,
  ) {
    super(transport, ctx);
  }

  onLine(buf: Buffer, start: number, end: number, text: string): void {
    if (this.redirectLine !== null) {
      // A standby answers the first line, whatever it is, with where the active is.
      this.close(this.redirectLine);
      return;
    }
    const req = parseSessionRequest(buf, start, end, text);
    const claim = this.claim;
    switch (req.kind) {
      case 'heartbeat':
        // The lease was already restarted by onActivity; the reply says where the session stands,
        // once the engine has ended a lease that lapsed before this line came (engine.heartbeat).
        if (claim !== null) this.engine.heartbeat(claim);
        if (this.closing) return;
        if (claim === null) this.close(NO_ACQUIRE_YET);
        else if (claim.state === 'holding') this.send(this.acquiredLine);
        else if (claim.state === 'waiting') this.send(encodeWaiting(claim.lock.positionOf(claim)));
        // Ended, and nobody told us (onEnded closes, a redirect closes): never leave a heartbeat
        // unanswered while the client believes it holds. It must stop and queue anew.
        else this.close(CLAIM_GONE);
        return;
      case 'acquire':
        if (claim !== null) this.close(SECOND_ACQUIRE);
        else this.acquire(req.name, req.leaseMs, req.claimKey === null ? null : claimKeyHash(req.claimKey));
        return;
      case 'client':
        // Once, before the claim: the name goes with the ACQUIRE (a resumed claim keeps its own).
        if (claim !== null || this.clientName !== null) this.close(LATE_CLIENT);
        else this.clientName = req.name;
        return;
      case 'resume':
        if (claim !== null) this.close(SECOND_ACQUIRE);
        else this.resume(req.name, claimKeyHash(req.claimKey));
        return;
      case 'unknown':
        this.close(claim === null ? NO_ACQUIRE_YET : NOT_A_HEARTBEAT);
        return;
      case 'error':
        this.close(encodeSessionError('protocol-error', req.detail));
        return;
    }
  }

  onOverflow(): void {
    this.ctx.report(this, 'line-too-long');
    this.close(LINE_TOO_LONG);
  }

  /** ClaimOwner: the lock is ours, now or by handover. */
  onGranted(claim: Claim): boolean {
    if (this.closing) return false;
    this.acquiredLine = encodeAcquired(claim.token);
    this.send(this.acquiredLine);
    return true;
  }

  /** ClaimOwner: the engine ended the claim; the session ends with it. */
  onEnded(_claim: Claim, reason: EndReason): void {
    this.close(endLine(reason));
  }

  /** Any input is a sign of life: the sliding lease restarts, holding or queued. */
  protected override onActivity(): void {
    if (this.claim !== null) this.engine.touch(this.claim);
  }

  protected override onIoTimeout(): void {
    this.close(this.partialSince !== 0 ? IO_TIMEOUT_LINE : IO_TIMEOUT_FIRST);
  }

  /** A connection that has not asked for anything within the io-timeout (of reading) is dropped. */
  protected override idleTooLong(now: number, ioTimeoutMs: number): boolean {
    return this.claim === null && now - this.readingSince > ioTimeoutMs;
  }

  goodbye(): string {
    return SESSION_GOODBYE;
  }

  /** Whether this session's claim may outlive the connection (it sent a claim key, and is live). */
  get resumable(): boolean {
    return this.claim !== null && this.claim.keyHash !== null && this.claim.state !== 'ended';
  }

  /**
   * The active role moved to the node at `sessionAddress` with this session's claim in its
   * replicated lock table: the client is told where to RESUME it, and the connection closes
   * without ending the claim here (the engine's reset that follows forgets it silently).
   */
  moveTo(sessionAddress: string): boolean {
    if (!this.resumable || this.closing) return false;
    this.claim = null;
    this.close(encodeMoved(sessionAddress));
    return true;
  }

  /**
   * `REDIRECT <session addr>` answers the first line; a session past it (its claim ended by the
   * engine reset that comes before a switch, or ended here) gets it now, without an ERROR line.
   */
  protected redirect(route: Extract<Route, { kind: 'redirect' }>): boolean {
    this.redirectLine = encodeSessionRedirect(route.session);
    if (this.claim === null) return false;
    this.beginClose();
    return true;
  }

  /** The connection is gone: a holder releases (the next waiter is granted), a waiter leaves. */
  protected releaseClaims(waitingOnly = false): void {
    // A resumable claim whose connection was reset under it (an RST or any transport error,
    // not the client closing) stays for its client to RESUME (its lease still runs): the client
    // cannot tell a reset from its node dying, and goes on working until its 0.8 x lease. A FIN,
    // the client's close, releases at once as always. It waits at most --max-park, and only while
    // fewer than --max-parked wait: past that it ends here as on a close (its RESUME gets 0x09).
    if (this.reset && this.resumable && this.claim !== null) {
      const claim = this.claim;
      this.claim = null;
      if (!this.engine.detach(claim, BETWEEN_CONNECTIONS)) this.engine.end(claim);
      return;
    }
    // engine.end ignores a claim that has already ended, so this may run any number of times.
    if (this.claim !== null && (!waitingOnly || this.claim.state === 'waiting')) this.engine.end(this.claim);
  }

  private acquire(name: string, leaseMs: number, keyHash: string | null): void {
    // A free lock is granted inside acquire (onGranted sends ACQUIRED); a busy one queues us.
    let claim: Claim;
    try {
      const clientName = this.clientName;
      claim = this.engine.acquire({ name, owner: this, protocol: 'session', client: this.address, clientName, leaseMs, waitMs: 0, sliding: true, keyHash });
    } catch (err) {
      // No token can be issued: the session ends with the reason (0x07 or 0x08), nothing was claimed.
      if (!(err instanceof TokensUnavailable)) throw err;
      this.close(err.reason === 'tokens-exhausted' ? TOKENS_EXHAUSTED : STORAGE_UNAVAILABLE);
      return;
    }
    this.claim = claim;
    if (claim.state === 'waiting') this.send(encodeWaiting(claim.lock.positionOf(claim)));
  }

  /**
   * Takes up a claim between connections. No such claim, a wrong key or a lapsed lease all get
   * the same line, and none of them touches the real claim.
   */
  private resume(name: string, keyHash: string): void {
    const claim = this.engine.resume(name, keyHash, this);
    if (claim === null) {
      this.close(CLAIM_UNKNOWN);
      return;
    }
    this.claim = claim;
    if (claim.state === 'holding') {
      this.acquiredLine = encodeAcquired(claim.token);
      this.send(this.acquiredLine);
    } else {
      this.send(encodeWaiting(claim.lock.positionOf(claim)));
    }
  }
}

function endLine(reason: EndReason): string {
  switch (reason) {
    case 'expired':
      return LEASE_EXPIRED;
    case 'force-released':
      return FORCE_RELEASED;
    case 'kicked':
      return KICKED;
    case 'wait-timeout':
      // Sessions wait forever (waitMs 0); only a silent lease can end a queued session.
      return LEASE_EXPIRED;
  }
}
