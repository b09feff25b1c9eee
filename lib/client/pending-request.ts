// The requests a KeyedClient has in flight. They are plain objects holding their promise's
// resolve/reject, so a request can move from a dropped connection to another one unchanged.
import { encodeKeyedAcquireRequest, encodeReleaseRequest } from '../protocol/keyed-codec.ts';
import type { KeyedGrant } from './keyed-grant.ts';

export interface PendingAcquire {
  readonly op: 'A';
  /** 'A ' + key: where the reply is looked up. */
  readonly slot: string;
  readonly key: string;
  readonly leaseWire: string;
  /** What the caller asked for, in ms; Infinity = wait forever. */
  readonly waitMs: number;
  /** performance.now() at the call, to shrink the wait when the request is sent again. */
  readonly startedAt: number;
  /** The wait as sent next, in decimal seconds. */
  waitWire: string;
  /** Connections it may still be tried on. */
  triesLeft: number;
  /**
   * performance.now() since when it is the oldest outstanding `A` on its key on its connection,
   * set by the connection; undefined while an older one is outstanding there. The server holds
   * its `T` (or an immediate `E A`) back until every older one is answered.
   */
  oldestSince: number | undefined;
  /** The client's own deadline for a finite wait (see acquireDeadlineMs), cleared when settled. */
  timer: NodeJS.Timeout | undefined;
  readonly resolve: (grant: KeyedGrant) => void;
  readonly reject: (error: Error) => void;
}

export interface PendingRelease {
  readonly op: 'R';
  readonly slot: string;
  readonly key: string;
  readonly token: bigint;
  readonly startedAt: number;
  /** The connection that granted the token, tried first; any connection will do. */
  readonly via: object | undefined;
  /** The connection an attempt was lost on: the retry goes elsewhere when another one is open. */
  lostOn: object | undefined;
  /** The deadline of the attempt in flight, cleared when it is answered or its connection drops. */
  timer: NodeJS.Timeout | undefined;
  readonly resolve: (released: boolean) => void;
  readonly reject: (error: Error) => void;
}

export type PendingRequest = PendingAcquire | PendingRelease;

/**
 * How long the client waits for an answer to an acquire with a finite wait before it gives up
 * on its own: the wait plus a margin for the round trip and a busy server (acquireMarginMs).
 * The server answers `T` at the wait, so only a server that stopped answering (stalled, or a
 * half-open connection) reaches this deadline.
 */
export function acquireDeadlineMs(waitMs: number): number {
  return waitMs + acquireMarginMs(waitMs);
}

/** The margin past the wait: 1 s + 10% of the wait. */
export function acquireMarginMs(waitMs: number): number {
  return 1000 + waitMs / 10;
}

/**
 * For an unanswered acquire past its deadline: how much longer to wait for its answer; <= 0
 * when it is overdue. The server answers an `A` only after every older `A` on its key on its
 * connection, so one behind them is not overdue, and once it is the oldest it gets the margin
 * again from then.
 */
export function acquireGraceLeftMs(request: PendingAcquire, now: number): number {
  const margin = acquireMarginMs(request.waitMs);
  return request.oldestSince === undefined ? margin : margin - (now - request.oldestSince);
}

export function requestLine(request: PendingRequest): string {
  return request.op === 'A' ? encodeKeyedAcquireRequest(request.key, request.leaseWire, request.waitWire) : encodeReleaseRequest(request.key, request.token);
}

/**
 * Before an acquire is sent again, shrink its wait by the time already spent, so the caller
 * never waits longer than asked. Returns false when no wait is left.
 */
export function shrinkWait(request: PendingAcquire, now: number, toWire: (ms: number) => string): boolean {
  if (request.waitMs === Infinity || request.waitMs === 0) return true; // forever stays forever
  const left = request.waitMs - (now - request.startedAt);
  if (left <= 0) return false;
  request.waitWire = toWire(left);
  return true;
}
