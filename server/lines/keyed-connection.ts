// One connection of the keyed protocol: pipelined `A`/`R` requests with a fixed lease and a
// wait per request, explicit release. A connection may have any number of requests waiting
// (bounded by maxBacklog); they leave their queues when it closes. A grant already delivered
// outlives the connection (it ends by R or by its lease); a grant that could not be written
// because the connection was gone is released at once.
//
// Reply order: replies with the same (op, key) must leave in request order. Grants on one key
// are FIFO anyway; only a timeout or kick can overtake an earlier waiter on the same key, so
// such a reply is held back on that earlier waiter and sent right after its own reply.
import type { AcquireRequest, Claim, ClaimOwner, EndReason } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import { TokensUnavailable } from '../../lib/tokens/token-source.ts';
import {
  IDENTITY_OK,
  encodeGranted,
  encodeKeyedError,
  encodeKeyedRedirect,
  encodeReleased,
  encodeTimeout,
  parseKeyedRequest,
} from '../../lib/protocol/keyed-codec.ts';
import { type ConnectionContext, LineConnection } from './line-connection.ts';
import type { LineTransport } from './line-transport.ts';
import type { Route } from './routing.ts';

export const KEYED_GOODBYE = encodeKeyedError('-', '-', 'server-going-away');
export const KEYED_REFUSAL = encodeKeyedError('-', '-', 'too-many-connections');

export interface KeyedLimits {
  /** Requests that may wait in queues at once on one connection. */
  maxBacklog: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface HeldReplies {
  text: string;
  lines: number;
}

export class KeyedConnection extends LineConnection implements ClaimOwner {
  /** Waiting requests per key, each list in request order (the contended path only). */
  private readonly waiting = new Map<string, Claim[]>();
  private waitingCount = 0;
  /**
   * Grants whose reply line has not been confirmed written to the kernel, oldest first, with
   * the output position where that line ends (from `pendingHead` on; the rest are confirmed).
   */
  private readonly pendingGrants: Claim[] = [];
  private readonly pendingEnds: number[] = [];
  private pendingHead = 0;
  /** Replies held back behind an earlier waiter on the same key; at most maxBacklog lines. */
  private heldBack: Map<Claim, HeldReplies> | null = null;
  private heldLines = 0;
  /** The one acquire request of this connection, refilled for each `A`: no object per request. */
  private readonly ask: Mutable<AcquireRequest>;

  constructor(
    transport: LineTransport,
    ctx: ConnectionContext,
    private readonly engine: LockEngine,
    private readonly limits: KeyedLimits,
  ) {
    super(transport, ctx);
    this.ask = { name: '', owner: this, protocol: 'keyed', client: this.address, clientName: null, leaseMs: 0, waitMs: 0, sliding: false };
  }

  onLine(buf: Buffer, start: number, end: number, text: string): void {
    if (this.redirectLine !== null) {
      // A standby: every request is answered with where the active is; the engine is not asked.
      this.send(this.redirectLine);
      return;
    }
    const req = parseKeyedRequest(buf, start, end, text);
    switch (req.kind) {
      case 'acquire': {
        if (this.waitingCount >= this.limits.maxBacklog) {
          this.replyBehindWaiters(req.key, encodeKeyedError('A', req.key, 'backlog-full'));
          return;
        }
        let claim: Claim;
        try {
          const ask = this.ask;
          ask.name = req.key;
          ask.leaseMs = req.leaseMs;
          ask.waitMs = req.waitMs;
          claim = this.engine.acquire(ask);
        } catch (err) {
          // No token can be issued (u64 used up, or the ceiling cannot be stored): this request
          // fails with the reason; nothing changed in the engine and the connection goes on.
          if (!(err instanceof TokensUnavailable)) throw err;
          this.replyBehindWaiters(req.key, encodeKeyedError('A', req.key, err.reason));
          return;
        }
        if (claim.state === 'waiting') this.addWaiting(claim);
        return;
      }
      case 'release': {
        const outcome = this.engine.release(req.key, req.token);
        if (outcome === 'session-claim') this.send(encodeKeyedError('R', req.key, 'session-claim'));
        else this.send(encodeReleased(req.key, outcome === 'ok'));
        return;
      }
      case 'identity':
        // Names the client for the requests after it (kept in the one request object); claims
        // made before keep the name they were made with.
        this.ask.clientName = req.name;
        this.send(IDENTITY_OK);
        return;
      case 'error':
        if (req.op === 'A') this.replyBehindWaiters(req.key, encodeKeyedError(req.op, req.key, req.error));
        else this.send(encodeKeyedError(req.op, req.key, req.error));
        return;
    }
  }

  onOverflow(): void {
    this.ctx.report(this, 'line-too-long');
    this.close(encodeKeyedError('-', '-', 'line-too-long'));
  }

  protected onIoTimeout(): void {
    this.close(encodeKeyedError('-', '-', 'io-timeout'));
  }

  goodbye(): string {
    return KEYED_GOODBYE;
  }

  /**
   * `M <lock addr>` at once for a new connection, which stays to answer each request with it. An
   * open one closes after it; its waiters go without a `T`: that would fail the client's
   * requests, which it re-sends at the new address instead. Delivered grants stay valid there.
   */
  protected redirect(route: Extract<Route, { kind: 'redirect' }>, fresh: boolean): boolean {
    this.redirectLine = encodeKeyedRedirect(route.lock);
    if (fresh) {
      this.send(this.redirectLine);
      return false;
    }
    this.endWaiters(false);
    this.beginClose();
    return true;
  }

  onGranted(claim: Claim): boolean {
    if (this.closing || this.transport.destroyed) return false;
    this.removeWaiting(claim);
    this.send(encodeGranted(claim.name, claim.token));
    this.pendingGrants.push(claim);
    this.pendingEnds.push(this.queuedEnd);
    this.sendHeldBehind(claim);
    return true;
  }

  protected override afterWrite(confirmed: number): void {
    const ends = this.pendingEnds;
    let head = this.pendingHead;
    while (head < ends.length && (ends[head] as number) <= confirmed) head++;
    if (head === ends.length) {
      this.pendingGrants.length = 0;
      ends.length = 0;
      head = 0;
    }
    this.pendingHead = head;
  }

  /**
   * Grants whose reply line never left this process are released at once, not left to their
   * lease. A line handed to the kernel counts as delivered, and that grant outlives the
   * connection: when in doubt, a grant is left to its lease rather than handed on twice.
   */
  protected override discardUnwritten(confirmed: number): void {
    for (let i = this.pendingHead; i < this.pendingGrants.length; i++) {
      const claim = this.pendingGrants[i];
      const end = this.pendingEnds[i];
      if (claim !== undefined && end !== undefined && end > confirmed && claim.state === 'holding') this.engine.end(claim);
    }
    this.pendingGrants.length = 0;
    this.pendingEnds.length = 0;
    this.pendingHead = 0;
  }

  onEnded(claim: Claim, reason: EndReason): void {
    if (!this.removeWaiting(claim)) return;
    // Only waiters get an answer here; an expired or force-released grant is learnt by its R (STALE).
    if (reason === 'wait-timeout') this.replyInOrder(claim, encodeTimeout(claim.name));
    else if (reason === 'kicked') this.replyInOrder(claim, encodeKeyedError('A', claim.name, 'kicked'));
  }

  /**
   * Only waiters leave: a delivered grant outlives its connection. Where the socket can still
   * write (the client half-closed), each waiter is answered `T` (its request is gone), followed
   * by the replies held behind it, so every request read gets its answer in order.
   */
  protected releaseClaims(): void {
    if (this.waitingCount > 0) this.endWaiters(true);
  }

  /** Ends every waiter here; `answer`: each gets its `T`, then the replies held behind it. */
  private endWaiters(answer: boolean): void {
    const lists = [...this.waiting.values()];
    this.waiting.clear();
    this.waitingCount = 0;
    for (const list of lists) {
      for (const claim of list) {
        this.engine.end(claim);
        if (answer) {
          this.send(encodeTimeout(claim.name));
          this.sendHeldBehind(claim);
        }
      }
    }
    this.heldBack = null;
    this.heldLines = 0;
  }

  /** Sends `line` unless an earlier waiter on the same key is still unanswered. */
  private replyInOrder(claim: Claim, line: string): void {
    const earlier = this.lastWaiterOn(claim.name, claim.id);
    if (earlier === null) {
      this.send(line);
      this.sendHeldBehind(claim);
      return;
    }
    // Whatever was held behind this claim goes out after it, so it moves along too.
    const moved = this.takeHeldBack(claim);
    this.holdBehind(earlier, line + (moved?.text ?? ''), 1 + (moved?.lines ?? 0));
  }

  /**
   * An immediate answer to an `A` (an error) waits for the earlier `A`s on its key. Held replies
   * count toward the backlog; past it, the client is not reading its answers in any useful
   * time, and the connection is closed rather than buffering without bound.
   */
  private replyBehindWaiters(key: string, line: string): void {
    const earlier = this.lastWaiterOn(key, Number.POSITIVE_INFINITY);
    if (earlier === null) this.send(line);
    else if (this.heldLines >= this.limits.maxBacklog) this.close(encodeKeyedError('-', '-', 'backlog-full'));
    else this.holdBehind(earlier, line, 1);
  }

  /** The latest waiting claim on `key` sent before claim `beforeId`, or null. */
  private lastWaiterOn(key: string, beforeId: number): Claim | null {
    const list = this.waiting.get(key);
    if (list === undefined) return null;
    for (let i = list.length - 1; i >= 0; i--) {
      const other = list[i];
      if (other !== undefined && other.id < beforeId) return other;
    }
    return null;
  }

  private addWaiting(claim: Claim): void {
    const list = this.waiting.get(claim.name);
    if (list === undefined) this.waiting.set(claim.name, [claim]);
    else list.push(claim);
    this.waitingCount++;
  }

  /** False when the claim was not waiting here. Lists are short: requests on one key on one connection. */
  private removeWaiting(claim: Claim): boolean {
    // The uncontended path (a grant at once, nothing waiting here) skips the map lookup.
    if (this.waitingCount === 0) return false;
    const list = this.waiting.get(claim.name);
    const i = list === undefined ? -1 : list.indexOf(claim);
    if (list === undefined || i < 0) return false;
    if (list.length === 1) this.waiting.delete(claim.name);
    else list.splice(i, 1);
    this.waitingCount--;
    return true;
  }

  private holdBehind(earlier: Claim, text: string, lines: number): void {
    this.heldBack ??= new Map();
    const held = this.heldBack.get(earlier);
    if (held === undefined) this.heldBack.set(earlier, { text, lines });
    else {
      held.text += text;
      held.lines += lines;
    }
    this.heldLines += lines;
  }

  /** Sends what was held behind `claim`, now that its own answer has gone out. */
  private sendHeldBehind(claim: Claim): void {
    const held = this.takeHeldBack(claim);
    if (held !== null) this.send(held.text);
  }

  private takeHeldBack(claim: Claim): HeldReplies | null {
    if (this.heldBack === null) return null;
    const held = this.heldBack.get(claim);
    if (held === undefined) return null;
    this.heldBack.delete(claim);
    this.heldLines -= held.lines;
    return held;
  }
}
