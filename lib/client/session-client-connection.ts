// One session-protocol connection, which is one claim on one lock: it sends ACQUIRE, keeps the
// claim alive with heartbeats (one in flight at most), takes the pushed ACQUIRED when the lock
// reaches it, and aborts `signal` the moment it can no longer vouch for its ownership.
// Reconnecting elsewhere is the SessionClient's job; this file only reports how the claim ended,
// with one exception: a resumable claim (the default: ACQUIRE carries a random claim key) is
// taken up again here, on a new connection with `RESUME <name> <key>`, when the server says
// `MOVED` (a handoff) or the connection drops (the active died). Its work is not aborted
// meanwhile, but only as long as the usual 0.8 x lease without a confirmation allows.
import { BatonError } from '../errors.ts';
import { sameAddress } from './claim-key.ts';
import type { LineConnector, LineLink } from './line-connector.ts';
import { formatAddress } from '../protocol/address-text.ts';
import type { Address } from './address.ts';
import { parseSessionReply } from '../protocol/session-reply-parser.ts';
import { encodeSessionAcquireRequest, encodeClientRequest, encodeResumeRequest, HEARTBEAT_LINE } from '../protocol/session-codec.ts';
import { HeartbeatSchedule } from './heartbeat-schedule.ts';
import { clientClosed, connectionLost, errorFromSessionCode, errorWithText, isServerSide } from './client-errors.ts';

/** How a claim ended before it held the lock (or that it holds it). */
export type AttemptOutcome =
  | { readonly kind: 'held' }
  | { readonly kind: 'redirect'; readonly address: Address }
  /** Server-side trouble: try again. `answered`: the server did answer before. */
  | { readonly kind: 'retry'; readonly reason: Error; readonly answered: boolean }
  | { readonly kind: 'failed'; readonly reason: Error }
  | { readonly kind: 'timed-out' };

export interface SessionStats {
  /** The gap the schedule now keeps between heartbeats, in ms. */
  readonly heartbeatInterval: number;
  /** EWMA of HEARTBEAT round trips, in ms; undefined before the first answer. */
  readonly smoothedRtt: number | undefined;
  readonly lastRtt: number | undefined;
  /** Heartbeats answered so far. */
  readonly heartbeats: number;
  /** Place in the queue from the last WAITING; undefined once held. */
  readonly position: number | undefined;
}

export interface SessionHooks {
  /** After each answered heartbeat, with the schedule it leads to. */
  readonly onHeartbeat?: (stats: SessionStats) => void;
  /** After each WAITING (1 = next in line). */
  readonly onWaiting?: (position: number) => void;
}

/** A held session lock, for callers that manage its lifetime themselves (like `baton run`). */
export interface SessionLease {
  readonly name: string;
  /** The fencing token, a u64. */
  readonly token: bigint;
  /** Aborts as soon as ownership is no longer confirmed; `signal.reason` says why. */
  readonly signal: AbortSignal;
  readonly stats: SessionStats;
  /** Releases the lock by closing the connection. Safe to call more than once. */
  close(): Promise<void>;
}

export interface SessionAttemptOptions extends SessionHooks {
  readonly name: string;
  readonly leaseMs: number;
  readonly minHeartbeatIntervalMs: number;
  readonly connectTimeoutMs: number;
  /** Report 'timed-out' if not held within this many ms; Infinity: never. */
  readonly giveUpAfterMs: number;
  /** Called once when the connection is finished with, however that happened. */
  readonly onEnded?: () => void;
  /**
   * The claim key (32 to 64 hex characters, random) that makes this claim resumable; without
   * one the session speaks the seed protocol and a lost connection is a lost claim.
   */
  readonly claimKey?: string;
  /** Where to look for the claim when its connection drops (the cluster's session addresses). */
  readonly resumeAddresses?: readonly Address[];
  /** The servers' --max-park: how long they keep the claim between connections (DEFAULT_MAX_PARK_MS if not given). */
  readonly maxParkMs?: number;
  /** Sent as `CLIENT <identity>` in the same write as the ACQUIRE or RESUME; null or absent: none. */
  readonly clientName?: string | null;
  /** How a socket is opened: TCP (socket-connector.ts), or in memory in tests. */
  readonly connector: LineConnector;
}

/** Without an answer for this share of the lease, the client stops trusting its ownership. */
const SILENCE_SHARE = 0.8;
/** `baton serve --max-park`'s default: a server keeps a claim between connections at most this long, whatever its lease. */
export const DEFAULT_MAX_PARK_MS = 60_000;
/** Redirects in a row while resuming before we call it a loop. */
const MAX_RESUME_REDIRECTS = 8;
/** Pause after a pass over every address found none that would answer a RESUME. */
const RESUME_PASS_PAUSE_MS = 100;

type Phase = 'acquiring' | 'queued' | 'held' | 'ended';

export class SessionClientConnection implements SessionLease {
  readonly name: string;
  token = 0n;
  readonly signal: AbortSignal;
  /** Settles once: held, or how the claim ended before that. */
  readonly ready: Promise<AttemptOutcome>;
  private settle!: (outcome: AttemptOutcome) => void;
  private readonly controller = new AbortController();
  private link: LineLink;
  /** Bumped for each connection: callbacks of a connection we left are ignored. */
  private generation = 0;
  /** Between connections: a RESUME is under way (or about to be sent) on `link`. */
  private resuming = false;
  private resumeRedirects = 0;
  /** Connections tried in a row for a RESUME without an answer. */
  private resumeMisses = 0;
  private resumeTimer: NodeJS.Timeout | undefined;
  private readonly schedule: HeartbeatSchedule;
  private phase: Phase = 'acquiring';
  /** Send time of the one request awaiting its answer (ACQUIRE or HEARTBEAT). */
  private inflightSince: number | undefined;
  private inflightIsHeartbeat = false;
  private lastSentAt = 0;
  /**
   * Send time of the last request the server answered. The server restarted our lease when that
   * request reached it, which was no earlier than this; counting silence from here rather than
   * from the answer's arrival keeps our deadline ahead of the server's even on a slow path back.
   */
  private anchor = 0;
  private answered = false;
  private heartbeats = 0;
  private position: number | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    address: Address,
    private readonly options: SessionAttemptOptions,
  ) {
    this.name = options.name;
    this.signal = this.controller.signal;
    this.schedule = new HeartbeatSchedule(options.leaseMs, options.minHeartbeatIntervalMs);
    this.ready = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.link = this.connect(address);
    if (options.giveUpAfterMs !== Infinity) this.giveUpTimer = setTimeout(this.giveUp, options.giveUpAfterMs);
  }

  get stats(): SessionStats {
    return {
      heartbeatInterval: this.schedule.intervalMs,
      smoothedRtt: this.schedule.smoothedRtt,
      lastRtt: this.schedule.lastRtt,
      heartbeats: this.heartbeats,
      position: this.position,
    };
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Whether the claim is between connections right now (being resumed). */
  get reconnecting(): boolean {
    return this.resuming;
  }

  private connect(address: Address): LineLink {
    const generation = ++this.generation;
    return this.options.connector.connect(
      address,
      {
        onOpen: () => {
          if (generation === this.generation) this.opened();
        },
        onLine: (line) => {
          if (generation === this.generation) this.receive(line);
        },
        onClose: (error) => {
          if (generation === this.generation) this.closed(error);
        },
      },
      this.options.connectTimeoutMs,
    );
  }

  private async shutdown(): Promise<void> {
    if (this.phase !== 'ended') {
      const held = this.phase === 'held';
      this.end();
      if (held) this.controller.abort(new Error(`session ${this.name} closed by its holder`));
      else this.settle({ kind: 'failed', reason: clientClosed() });
    }
    await this.link.end();
  }

  private opened(): void {
    if (this.phase === 'ended') return;
    const now = performance.now();
    if (this.resuming) {
      // The silence deadline keeps counting from the last confirmation: a resume extends nothing
      // until the server answers it.
      this.send(this.identityLine() + encodeResumeRequest(this.name, this.options.claimKey ?? ''), false, now);
      return;
    }
    this.anchor = now;
    const key = this.options.claimKey;
    this.send(this.identityLine() + encodeSessionAcquireRequest(this.name, this.options.leaseMs, key), false, now);
    this.silenceTimer = setTimeout(this.checkSilence, timerDelay(SILENCE_SHARE * this.options.leaseMs));
  }

  /** `CLIENT <identity>\n` to go before the first line, or nothing. */
  private identityLine(): string {
    const name = this.options.clientName;
    return name === undefined || name === null ? '' : `${encodeClientRequest(name)}\n`;
  }

  private send(line: string, isHeartbeat: boolean, now: number): void {
    this.link.writeNow(line);
    this.inflightSince = now;
    this.inflightIsHeartbeat = isHeartbeat;
    this.lastSentAt = now;
  }

  private receive(line: string): void {
    if (this.phase === 'ended') return;
    const reply = parseSessionReply(line);
    const now = performance.now();
    switch (reply.kind) {
      case 'acquired':
        return this.onAcquired(reply.token, now);
      case 'waiting':
        return this.onWaiting(reply.position, now);
      case 'error':
        return this.onError(errorFromSessionCode(reply.code, reply.text));
      case 'moved':
        // The claim moved with a handoff to the node named: take it up there.
        if (this.options.claimKey === undefined) return this.protocolFailure(`MOVED to a session that sent no claim key: ${line}`);
        return this.resumeAt(reply.address);
      case 'redirect':
        // Resuming, a standby names the active: look for the claim there.
        if (this.resuming) {
          if (++this.resumeRedirects > MAX_RESUME_REDIRECTS)
            return this.resumeFailed(errorWithText('protocol-error', `more than ${MAX_RESUME_REDIRECTS} redirects in a row`));
          return this.resumeAt(reply.address);
        }
        // A node that stops being active (handoff, split brain) redirects its open sessions: the
        // claim ended there, as at ERROR 0x01. The next claim starts at the named address.
        if (this.phase === 'held') {
          return this.lose(
            errorWithText('server-going-away', `${formatAddress(this.link.address)} is no longer active: REDIRECT to ${formatAddress(reply.address)}`),
          );
        }
        return this.finish({ kind: 'redirect', address: reply.address });
      case 'malformed':
        return this.protocolFailure(`unreadable reply (${reply.why}): ${reply.line}`);
    }
  }

  private onAcquired(token: bigint, now: number): void {
    if (this.resuming) {
      // The answer to RESUME: the same claim, holding (the same token) or granted meanwhile.
      const sentAt = this.inflightSince;
      if (sentAt === undefined) return this.protocolFailure('ACQUIRED that answers no request');
      if (this.phase === 'held' && token !== this.token) {
        return this.protocolFailure(`RESUME answered with token ${token} for a claim holding token ${this.token}`);
      }
      this.resumed();
      this.answer(sentAt, now);
      if (this.phase === 'queued') this.becomeHeld(token);
      return;
    }
    // While queued, the first ACQUIRED is the push (the server sends it before answering any
    // heartbeat as holder); a heartbeat in flight is still owed its own answer.
    if (this.phase === 'queued') return this.becomeHeld(token);
    const sentAt = this.inflightSince;
    if (sentAt === undefined) return this.protocolFailure('ACQUIRED that answers no request');
    if (this.phase === 'held' && token !== this.token) {
      return this.protocolFailure(`ACQUIRED with token ${token} while holding token ${this.token}`);
    }
    this.answer(sentAt, now);
    if (this.phase === 'acquiring') this.becomeHeld(token);
  }

  private onWaiting(position: number, now: number): void {
    const sentAt = this.inflightSince;
    if (sentAt === undefined) return this.protocolFailure('WAITING that answers no request');
    if (this.phase === 'held') return this.lose(errorWithText('protocol-error', 'WAITING while holding the lock'));
    if (this.resuming) this.resumed();
    this.phase = 'queued';
    this.position = position;
    this.answer(sentAt, now);
    this.options.onWaiting?.(position);
  }

  private onError(error: BatonError): void {
    if (this.resuming) {
      // A node going away or full: look elsewhere. Anything else (claim-unknown above all: it
      // expired, or another node has it no more) means the claim is gone.
      if (isServerSide(error)) return this.resumeNext();
      return this.resumeFailed(error);
    }
    if (this.phase === 'held') return this.lose(error);
    this.finish(isWorthRetrying(error) ? { kind: 'retry', reason: error, answered: this.answered } : { kind: 'failed', reason: error });
  }

  private closed(error: Error | undefined): void {
    if (this.phase === 'ended') return;
    // Our link gave up on what the server sent (a line far too long): a broken server, not a
    // dropped connection, so neither a resume nor a retry.
    if (error instanceof BatonError && error.code === 'protocol-error') return this.protocolFailure(error.message);
    // A resumable claim outlives a dropped connection on the server for a while (a standby that
    // takes over keeps it): look for it, until the silence deadline says ownership is lost.
    if (this.options.claimKey !== undefined && (this.phase === 'held' || this.phase === 'queued') && this.closing === undefined) {
      return this.resumeNext();
    }
    const where = formatAddress(this.link.address);
    const reason = error instanceof BatonError ? error : connectionLost(error ? `${where}: ${error.message}` : `${where} closed the connection`);
    if (this.phase === 'held') this.lose(reason);
    else this.finish({ kind: 'retry', reason, answered: this.answered });
  }

  /** The request in flight got its answer: a round trip to learn from, and a fresh deadline. */
  private answer(sentAt: number, now: number): void {
    this.inflightSince = undefined;
    this.anchor = sentAt;
    this.answered = true;
    if (this.inflightIsHeartbeat) {
      this.schedule.sample(now - sentAt);
      this.heartbeats++;
    }
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(this.beat, timerDelay(this.lastSentAt + this.schedule.intervalMs - now));
    if (this.inflightIsHeartbeat) this.options.onHeartbeat?.(this.stats);
  }

  private becomeHeld(token: bigint): void {
    this.phase = 'held';
    this.token = token;
    this.position = undefined;
    clearTimeout(this.giveUpTimer);
    this.settle({ kind: 'held' });
  }

  private readonly beat = (): void => {
    if (this.phase !== 'ended' && !this.resuming && this.inflightSince === undefined) this.send(HEARTBEAT_LINE, true, performance.now());
  };

  /** Leaves the current connection and asks `address` for the claim (RESUME). */
  private resumeAt(address: Address): void {
    this.resuming = true;
    this.armResumeSilence();
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.resumeTimer);
    this.inflightSince = undefined;
    const old = this.link;
    this.link = this.connect(address);
    old.destroy();
  }

  /** The connection dropped, or a node could not answer: the next address, pausing after a whole pass. */
  private resumeNext(): void {
    const list = this.options.resumeAddresses ?? [this.link.address];
    const at = list.findIndex((a) => sameAddress(a, this.link.address));
    const next = list[(at + 1) % list.length] ?? this.link.address;
    this.resumeRedirects = 0;
    this.resuming = true;
    this.armResumeSilence();
    clearTimeout(this.heartbeatTimer);
    this.inflightSince = undefined;
    this.generation++; // the connection we leave says nothing more
    this.link.destroy();
    if (++this.resumeMisses % list.length !== 0) return this.resumeAt(next);
    clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      if (this.phase !== 'ended') this.resumeAt(next);
    }, RESUME_PASS_PAUSE_MS);
  }

  /** A RESUME was answered: back on a connection. */
  private resumed(): void {
    this.resuming = false;
    this.resumeRedirects = 0;
    this.resumeMisses = 0;
  }

  /** The claim is not to be found again: a holder's ownership is lost; a waiter queues anew. */
  private resumeFailed(error: BatonError): void {
    if (this.phase === 'held') return this.lose(error);
    this.finish({ kind: 'retry', reason: error, answered: this.answered });
  }

  /**
   * How long the server keeps the claim without hearing from us: the lease, but between
   * connections at most its --max-park (from when it lost the connection, which is after the
   * anchor), after which it ends the claim with nobody to tell.
   */
  private keptMs(): number {
    return this.resuming ? Math.min(this.options.leaseMs, this.options.maxParkMs ?? DEFAULT_MAX_PARK_MS) : this.options.leaseMs;
  }

  /** Between connections the silence deadline may come sooner (keptMs): the timer is set for it. */
  private armResumeSilence(): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(this.checkSilence, timerDelay(this.anchor + SILENCE_SHARE * this.keptMs() - performance.now()));
  }

  /** One timer, re-armed lazily: answers only move the anchor, the timer checks it when due. */
  private readonly checkSilence = (): void => {
    if (this.phase === 'ended') return;
    const kept = this.keptMs();
    const left = this.anchor + SILENCE_SHARE * kept - performance.now();
    if (left > 0) {
      this.silenceTimer = setTimeout(this.checkSilence, timerDelay(left));
      return;
    }
    const what = kept < this.options.leaseMs ? `${kept} ms a server keeps a claim between connections (--max-park)` : `${kept} ms lease`;
    const error = errorWithText('lease-expired', `no answer from the server within 0.8 x the ${what}`);
    if (this.phase === 'held') this.lose(error);
    else this.finish({ kind: 'retry', reason: error, answered: this.answered });
  };

  private readonly giveUp = (): void => {
    if (this.phase === 'acquiring' || this.phase === 'queued') this.finish({ kind: 'timed-out' });
  };

  private protocolFailure(text: string): void {
    const error = errorWithText('protocol-error', text);
    if (this.phase === 'held') this.lose(error);
    else this.finish({ kind: 'failed', reason: error });
  }

  /** Before holding: report how the claim ended and drop the connection. */
  private finish(outcome: AttemptOutcome): void {
    this.end();
    this.link.destroy();
    this.settle(outcome);
  }

  /** While holding: ownership can no longer be vouched for. Closing lets the server move on. */
  private lose(reason: Error): void {
    this.end();
    this.controller.abort(reason);
    this.link.destroy();
  }

  private end(): void {
    this.phase = 'ended';
    this.resuming = false;
    clearTimeout(this.resumeTimer);
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.silenceTimer);
    clearTimeout(this.giveUpTimer);
    this.options.onEnded?.();
  }
}

/**
 * Server conditions are worth another try, on this node or the next, except fencing tokens
 * exhausted: the token sequence is the cluster's, so no node of it will grant again.
 */
function isWorthRetrying(error: BatonError): boolean {
  return isServerSide(error) && error.code !== 'tokens-exhausted';
}

/**
 * setTimeout's delay, within what it takes: past 2^31-1 ms Node fires after 1 ms instead. Huge
 * leases then get an early heartbeat (harmless) and an early silence check (which re-arms).
 */
function timerDelay(ms: number): number {
  return Math.min(2_147_483_647, Math.max(0, ms));
}
