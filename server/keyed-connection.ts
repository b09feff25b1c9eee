// One connection of the keyed protocol: pipelined `A`/`R` requests with a fixed lease and a
// wait per request, explicit release. A connection may have any number of requests waiting
// (bounded by maxBacklog); they leave their queues when it closes. A grant already delivered
// outlives the connection (it ends by R or by its lease); a grant that could not be written
// because the connection was gone is released at once.
//
// Reply order: replies with the same (op, key) must leave in request order. Grants on one key
// are FIFO anyway; only a timeout or kick can overtake an earlier waiter on the same key, so
// such a reply is held back on that earlier waiter and sent right after its own reply.
import type { Socket } from 'node:net';
import type { Claim, ClaimOwner, EndReason } from '../lib/engine/claim.ts';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import {
  encodeGranted,
  encodeKeyedError,
  encodeReleased,
  encodeTimeout,
  parseKeyedRequest,
} from '../lib/protocol/keyed-codec.ts';
import { type ConnectionContext, LineConnection } from './line-connection.ts';

export const KEYED_GOODBYE = encodeKeyedError('-', '-', 'server-going-away');
export const KEYED_REFUSAL = encodeKeyedError('-', '-', 'too-many-connections');

export interface KeyedLimits {
  /** Requests that may wait in queues at once on one connection. */
  maxBacklog: number;
}

export class KeyedConnection extends LineConnection implements ClaimOwner {
  /** Waiting requests per key, each list in request order (the contended path only). */
  private readonly waiting = new Map<string, Claim[]>();
  private waitingCount = 0;
  /** Grants whose reply is in the output buffer, not yet handed to the socket. */
  private unsent: Claim[] = [];
  /** Grants handed to the socket whose bytes have not all reached the kernel yet. */
  private unflushed: Claim[] = [];
  /** Replies held back behind an earlier waiter on the same key. */
  private heldBack: Map<Claim, string> | null = null;

  constructor(
    socket: Socket,
    ctx: ConnectionContext,
    private readonly engine: LockEngine,
    private readonly limits: KeyedLimits,
  ) {
    super(socket, ctx);
  }

  onLine(buf: Buffer, start: number, end: number): void {
    const req = parseKeyedRequest(buf, start, end);
    switch (req.kind) {
      case 'acquire': {
        if (this.waitingCount >= this.limits.maxBacklog) {
          this.replyBehindWaiters(req.key, encodeKeyedError('A', req.key, 'backlog-full'));
          return;
        }
        const claim = this.engine.acquire(req.key, this, 'keyed', this.address, req.leaseMs, req.waitMs, false);
        if (claim.state === 'waiting') this.addWaiting(claim);
        return;
      }
      case 'release':
        this.send(encodeReleased(req.key, this.engine.release(req.key, req.token) === 'ok'));
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

  onGranted(claim: Claim): boolean {
    if (this.closing || this.socket.destroyed) return false;
    this.removeWaiting(claim);
    this.reply(claim, encodeGranted(claim.lock.name, claim.token));
    this.unsent.push(claim);
    return true;
  }

  protected override afterWrite(drained: boolean): void {
    if (drained) {
      this.unsent.length = 0;
      this.unflushed.length = 0;
    } else if (this.unsent.length > 0) {
      for (const claim of this.unsent) this.unflushed.push(claim);
      this.unsent.length = 0;
    }
  }

  /** Grants whose reply never left are released at once, not left to their lease. */
  protected override discardUnwritten(): void {
    const lost = this.unflushed.concat(this.unsent);
    this.unsent.length = 0;
    this.unflushed.length = 0;
    for (const claim of lost) if (claim.state === 'holding') this.engine.end(claim);
  }

  onEnded(claim: Claim, reason: EndReason): void {
    if (!this.removeWaiting(claim)) return;
    // Only waiters get an answer here; an expired or force-released grant is learnt by its R (STALE).
    if (reason === 'wait-timeout') this.replyInOrder(claim, encodeTimeout(claim.lock.name));
    else if (reason === 'kicked') this.replyInOrder(claim, encodeKeyedError('A', claim.lock.name, 'kicked'));
  }

  /** Only waiters: a delivered grant outlives its connection. */
  protected releaseClaims(): void {
    if (this.waitingCount === 0) return;
    const claims = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.waitingCount = 0;
    this.heldBack = null;
    for (const claim of claims) this.engine.end(claim);
  }

  /** Sends `line` unless an earlier waiter on the same key is still unanswered. */
  private replyInOrder(claim: Claim, line: string): void {
    const earlier = this.lastWaiterOn(claim.lock.name, claim.id);
    if (earlier === null) {
      this.reply(claim, line);
      return;
    }
    // Whatever was held behind this claim goes out after it, so it moves along too.
    this.holdBehind(earlier, line + (this.takeHeldBack(claim) ?? ''));
  }

  /** An immediate answer to an `A` (an error) waits for the earlier `A`s on its key. */
  private replyBehindWaiters(key: string, line: string): void {
    const earlier = this.lastWaiterOn(key, Number.POSITIVE_INFINITY);
    if (earlier === null) this.send(line);
    else this.holdBehind(earlier, line);
  }

  /** The latest waiting claim on `key` sent before claim `beforeId`, or null. */
  private lastWaiterOn(key: string, beforeId: number): Claim | null {
    const list = this.waiting.get(key);
    if (list === undefined) return null;
    for (let i = list.length - 1; i >= 0; i--) {
      const other = list[i] as Claim;
      if (other.id < beforeId) return other;
    }
    return null;
  }

  private addWaiting(claim: Claim): void {
    const list = this.waiting.get(claim.lock.name);
    if (list === undefined) this.waiting.set(claim.lock.name, [claim]);
    else list.push(claim);
    this.waitingCount++;
  }

  /** False when the claim was not waiting here. Lists are short: requests on one key on one connection. */
  private removeWaiting(claim: Claim): boolean {
    const list = this.waiting.get(claim.lock.name);
    const i = list === undefined ? -1 : list.indexOf(claim);
    if (list === undefined || i < 0) return false;
    if (list.length === 1) this.waiting.delete(claim.lock.name);
    else list.splice(i, 1);
    this.waitingCount--;
    return true;
  }

  private holdBehind(earlier: Claim, text: string): void {
    this.heldBack ??= new Map();
    this.heldBack.set(earlier, (this.heldBack.get(earlier) ?? '') + text);
  }

  private reply(claim: Claim, line: string): void {
    this.send(line);
    const held = this.takeHeldBack(claim);
    if (held !== null) this.send(held);
  }

  private takeHeldBack(claim: Claim): string | null {
    if (this.heldBack === null) return null;
    const held = this.heldBack.get(claim);
    if (held === undefined) return null;
    this.heldBack.delete(claim);
    return held;
  }
}
