// One persistent keyed-protocol connection: it pipelines requests, matches replies to them by
// (op, key) in send order, follows `M` redirects, and after a drop hands its unanswered
// requests back to the client and reconnects in the background.
import { BatonError } from '../errors.ts';
import type { LineConnector, LineLink } from './line-connector.ts';
import { formatAddress } from '../protocol/address-text.ts';
import type { Address } from './address.ts';
import { PendingTable } from './pending-table.ts';
import { requestLine, shrinkWait } from './pending-request.ts';
import type { PendingRequest } from './pending-request.ts';
import { parseKeyedReply } from '../protocol/keyed-reply-parser.ts';
import { KeyedGrant } from './keyed-grant.ts';
import type { Releaser } from './keyed-grant.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { connectionLost, errorFromWireName, errorWithText } from './client-errors.ts';
import { waitToWireSeconds } from '../protocol/duration-text.ts';
import { encodeIdentityRequest } from '../protocol/keyed-codec.ts';

/** Redirects in a row without a real reply before we call it a loop. */
const MAX_REDIRECTS = 8;
/**
 * A `T` that comes with more than this left of its wait is the server letting go of the request
 * as it goes away, not the wait running out. Within it, a timer a hair early on the server's side
 * could look the same: such a T is taken as the timeout, which it all but is.
 */
const LET_GO_MARGIN_MS = 10;
/** How soon a connection comes home after the node a redirect named could not be reached. */
const REDIRECT_RETRY_MS = 200;

function sameAddress(a: Address, b: Address): boolean {
  return a.host === b.host && a.port === b.port;
}

/**
 * idle: not started; connecting: socket opening (requests queue on it); open: ready;
 * down: dropped, waiting for the next reconnect; closed: by the client, for good.
 */
export type ConnectionState = 'idle' | 'connecting' | 'open' | 'down' | 'closed';

export interface KeyedClientConnectionHooks {
  readonly releaser: Releaser;
  /**
   * Requests that were on a connection that dropped; none of them got an answer. `lostAt`: the
   * node the socket talked to (its home, or where a redirect had led it).
   */
  orphaned(requests: PendingRequest[], reason: Error, from: KeyedClientConnection, lostAt: Address): void;
  /** The connection is connecting again, so it can take requests (its socket holds them until it is up). */
  usable(connection: KeyedClientConnection): void;
}

export interface KeyedClientConnectionOptions {
  readonly reconnectIntervalMs: number;
  readonly connectTimeoutMs: number;
  /** Sent as `I <identity>` first on every socket (a reconnect, a redirect); null sends none. */
  readonly clientName: string | null;
  /** How a socket is opened: TCP (socket-connector.ts), or in memory in tests. */
  readonly connector: LineConnector;
}

export class KeyedClientConnection {
  state: ConnectionState = 'idle';
  private link: LineLink | undefined;
  /** Where we talk now: `home` until a redirect points elsewhere. */
  private address: Address;
  private readonly pending = new PendingTable<PendingRequest>();
  private redirects = 0;
  /** What the server said before closing (`E - - ...`), the best reason for the drop. */
  private farewell: Error | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Whether the socket in use has answered a request yet. */
  private served = false;
  /**
   * Acquires answered `T` well before their wait could have run out: the server let go of them as it
   * went away (`T` comes just before `E - - server-going-away`). They are sent again, with what
   * is left of their wait, when this connection drops, which the server's goodbye makes it do.
   */
  private readonly letGo = new Set<PendingRequest>();

  constructor(
    /** The address this connection belongs to; it comes back here after every drop. */
    readonly home: Address,
    private readonly hooks: KeyedClientConnectionHooks,
    private readonly options: KeyedClientConnectionOptions,
  ) {
    this.address = home;
  }

  start(): void {
    if (this.state === 'idle') this.connect(this.home);
  }

  /** Sends now if open; while connecting the socket holds the bytes until it is up. */
  send(request: PendingRequest): void {
    const link = this.link;
    if (!link) throw new Error(`send on a ${this.state} connection`); // the pool picks only live ones
    if (request.op === 'A') request.oldestSince = this.pending.oldest(request.slot) ? undefined : performance.now();
    this.pending.push(request.slot, request);
    link.write(requestLine(request));
  }

  /**
   * Whether this connection talks to `node` only because a standby's `M` led it there (its home
   * is another node). When `node` has just died under another connection, this one dies with
   * it a moment later (a dying process closes its sockets one by one): it is no place to
   * re-send, and it comes home by itself once it drops.
   */
  reachedOnlyByRedirect(node: Address): boolean {
    return sameAddress(this.address, node) && !sameAddress(this.home, node);
  }

  /** Whether `request` is sent here and not yet answered. */
  holds(request: PendingRequest): boolean {
    return this.pending.has(request.slot, request) || this.letGo.has(request);
  }

  /**
   * Gives up on `request`, which the server has not answered in time, and drops this connection
   * at once: the server then forgets the request, and replies still owed on this socket could
   * no longer be matched. The other requests move on as after any drop. Returns the server's
   * address, or undefined when `request` is not pending here.
   */
  abandon(request: PendingRequest, why: string): string | undefined {
    if (!this.pending.remove(request.slot, request) && !this.letGo.delete(request)) return undefined;
    const where = formatAddress(this.address);
    const link = this.link;
    this.link = undefined; // detach first, so the socket's own close is ignored
    link?.destroy();
    this.dropped(connectionLost(`${where}: dropped after ${why}`));
    return where;
  }

  /** Fails whatever is pending with `reason` and closes for good. */
  async close(reason: Error): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.reconnectTimer);
    for (const request of this.takeUnanswered()) request.reject(reason);
    const link = this.link;
    this.link = undefined;
    if (link) await link.end();
  }

  private connect(address: Address): void {
    this.state = 'connecting';
    this.address = address;
    queueMicrotask(() => {
      if (this.state === 'connecting' || this.state === 'open') this.hooks.usable(this);
    });
    // The handlers check they still belong to the current socket: after a redirect the old
    // socket may still deliver lines or its close, and those must not touch the new one.
    const link: LineLink = this.options.connector.connect(
      address,
      {
        onOpen: () => {
          if (this.link === link) this.state = 'open';
        },
        onLine: (line) => {
          if (this.link === link) this.receive(line);
        },
        onClose: (error) => {
          if (this.link === link) this.dropped(error);
        },
      },
      this.options.connectTimeoutMs,
    );
    this.link = link;
    // First on the socket, before any request it carries: the server names its claims with it.
    if (this.options.clientName !== null) link.write(encodeIdentityRequest(this.options.clientName));
  }

  private receive(line: string): void {
    const reply = parseKeyedReply(line);
    if (reply.kind !== 'redirect') this.redirects = 0;
    // Served: the server answered a request (a redirect or a goodbye is not service).
    if (reply.kind !== 'redirect' && reply.kind !== 'connection-error') this.served = true;
    switch (reply.kind) {
      case 'granted': {
        const request = this.answered(reply.slot);
        if (request?.op === 'A') request.resolve(new KeyedGrant(this.hooks.releaser, this, reply.key, reply.token));
        else this.unmatched(line);
        return;
      }
      case 'timed-out': {
        const request = this.answered(reply.slot);
        if (request?.op !== 'A') this.unmatched(line);
        else if (request.waitMs - (performance.now() - request.startedAt) > LET_GO_MARGIN_MS) this.letGo.add(request);
        else request.reject(new LockTimeoutError(reply.key, request.waitMs));
        return;
      }
      case 'released':
      case 'stale': {
        const request = this.answered(reply.slot);
        if (request?.op === 'R') request.resolve(reply.kind === 'released');
        else this.unmatched(line);
        return;
      }
      case 'request-error': {
        // A reply whose key matches nothing (the server echoes a key it refused in its own
        // spelling) is ignored. Names are checked with the server's rule before they are sent
        // (lib/protocol/key-rules.ts), so the server never refuses a key of ours.
        this.answered(reply.slot)?.reject(errorFromWireName(reply.name, reply.text));
        return;
      }
      case 'connection-error':
        // The server closes after this; keep its words for the requests we hand back.
        this.farewell = errorFromWireName(reply.name, reply.text);
        return;
      case 'redirect':
        this.redirect(reply.address);
        return;
      case 'identity-ok':
        return;
      case 'malformed':
        // Matching replies to requests is only sound while we understand every line.
        this.link?.destroy(errorWithText('protocol-error', `unreadable reply (${reply.why}): ${reply.line}`));
        return;
    }
  }

  /**
   * A reply to no request sent here: the server is not speaking the protocol we think it is, and
   * no later reply could be matched soundly. Dropping the connection hands the rest back.
   */
  private unmatched(line: string): void {
    this.link?.destroy(errorWithText('protocol-error', `a reply to no request: ${line}`));
  }

  /** Every request sent here and not answered yet (those let go first: they were sent first). */
  private takeUnanswered(): PendingRequest[] {
    const out = [...this.letGo, ...this.pending.drain()];
    this.letGo.clear();
    return out;
  }

  /**
   * Takes the oldest request of `slot`, which this reply answers. The next `A` on that key is
   * now the oldest: the server answers it next, and its deadline gives it a margin from here.
   */
  private answered(slot: string): PendingRequest | undefined {
    const request = this.pending.shift(slot);
    const next = this.pending.oldest(slot);
    if (next?.op === 'A') next.oldestSince = performance.now();
    return request;
  }

  /** `M host:port`: this node is a standby. Talk to the active node and send everything again. */
  private redirect(target: Address): void {
    const old = this.link;
    if (++this.redirects > MAX_REDIRECTS) {
      old?.destroy(errorWithText('protocol-error', `more than ${MAX_REDIRECTS} redirects in a row`));
      return;
    }
    this.link = undefined; // detach first, so the old socket's close is ignored
    this.served = false; // a new socket: it has served nothing yet
    old?.destroy();
    this.connect(target);
    const now = performance.now();
    for (const request of this.takeUnanswered()) {
      if (request.op === 'A' && !shrinkWait(request, now, waitToWireSeconds)) {
        request.reject(new LockTimeoutError(request.key, request.waitMs));
      } else {
        this.send(request);
      }
    }
  }

  private dropped(error: Error | undefined): void {
    const where = formatAddress(this.address);
    const reason =
      this.farewell ?? (error instanceof BatonError ? error : connectionLost(error ? `${where}: ${error.message}` : `${where} closed the connection`));
    // A connection that was serving and then dropped (the node it was on died or handed off)
    // comes home at once: in a cluster another node is taking over, and waiting the interval would
    // leave the client without a connection for no reason. A connect that failed, or one dropped
    // before it answered anything (a server turning it away), waits the interval.
    // Rate-limited by nature: to be dropped again after coming back, it must first be answered again.
    const served = this.served;
    const lostAt = this.address; // where the socket talked, before the connection goes home below
    // A redirect's target that could not be reached (the active a standby named has just died):
    // home again soon, where the standby will know better, not after the whole interval.
    const redirectFailed = !served && !sameAddress(this.address, this.home);
    this.served = false;
    this.link = undefined;
    this.farewell = undefined;
    this.redirects = 0;
    this.state = 'down';
    this.address = this.home;
    // At once (not after a timer): meanwhile this connection would count as down, and an acquire
    // made with every connection down fails at once.
    if (served) this.connect(this.home);
    else {
      const delay = redirectFailed ? Math.min(REDIRECT_RETRY_MS, this.options.reconnectIntervalMs) : this.options.reconnectIntervalMs;
      this.reconnectTimer = setTimeout(this.reconnect, delay);
      // Reconnecting must not keep a process alive that has nothing else to do.
      this.reconnectTimer.unref();
    }
    const orphans = this.takeUnanswered();
    if (orphans.length > 0) this.hooks.orphaned(orphans, reason, this, lostAt);
  }

  private readonly reconnect = (): void => {
    this.reconnectTimer = undefined;
    if (this.state === 'down') this.connect(this.home);
  };
}
