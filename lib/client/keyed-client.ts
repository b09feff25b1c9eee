// The keyed-protocol client: a small pool of persistent connections (one per address, two when
// there is only one address). Every acquire and release goes to the first open one (pick, below):
// the others stand by for when it drops. It owns the retry rules; each KeyedClientConnection owns
// its socket, its pending table and its redirects.
import { DEFAULT_KEYED_PORT, normalizeAddresses } from './address.ts';
import type { Address, AddressInput } from './address.ts';
import { KeyedClientConnection } from './keyed-client-connection.ts';
import type { KeyedGrant } from './keyed-grant.ts';
import type { Releaser } from './keyed-grant.ts';
import { acquireDeadlineMs, acquireGraceLeftMs, shrinkWait } from './pending-request.ts';
import type { PendingAcquire, PendingRequest, PendingRelease } from './pending-request.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { clientClosed, connectionLost, errorWithText } from './client-errors.ts';
import { leaseToWireSeconds, waitToWireSeconds } from '../protocol/duration-text.ts';
import { requireValidLockName } from './lock-names.ts';
import { resolveClientName } from './default-client-name.ts';
import type { LineConnector } from './line-connector.ts';
import { socketConnector } from './socket-connector.ts';

export interface KeyedClientOptions {
  /** The servers of one Baton cluster; default 127.0.0.1:7070. */
  readonly addresses?: readonly AddressInput[];
  /** How often a dropped connection tries to come back, in ms (default 3000). */
  readonly reconnectInterval?: number;
  /** How long a release keeps being retried when its connection drops, in ms (default 5000). */
  readonly releaseRetryFor?: number;
  /** The pause between release retries, in ms (default 200). */
  readonly releaseRetryInterval?: number;
  /**
   * How long one release attempt waits for its answer, in ms (default 1000). A silent server
   * fails the attempt (and that connection is dropped); the retries above then go on.
   */
  readonly releaseAttemptTimeout?: number;
  /** How long a connect may take before it counts as failed, in ms (default 3000). */
  readonly connectTimeout?: number;
  /**
   * The identity shown to operators for this client's locks (keyed `I`): default
   * `<user>@<host> pid <pid>`; null sends none. A bad one throws BatonError `bad-identity`.
   */
  readonly clientName?: string | null;
}

export interface AcquireOptions {
  /** How long the lock stays held without a release, in ms (> 0). */
  readonly lease: number;
  /**
   * How long to queue for the lock, in ms. 0, undefined or Infinity: wait forever. A finite wait
   * also bounds how long the client waits for any answer: if the server is silent for the wait
   * plus 1 s + 10%, the acquire rejects with LockTimeoutError and its connection is dropped.
   * An acquire sent behind an earlier acquire of the same key on the same connection is answered
   * only after that one (even its timeout), so for it the 1 s + 10% also count from then.
   */
  readonly wait?: number;
}

const NO_CONNECTION = 'no connection to a Baton server is up';
/** setTimeout fires at once (with a warning) for anything longer. */
const MAX_TIMER_MS = 0x7fffffff;

/** A parked acquire: the timer that gives up on it, and the node it was lost on, when it was. */
interface Parked {
  readonly timer: NodeJS.Timeout;
  readonly lostAt: Address | undefined;
}

export class KeyedClient implements Releaser {
  private readonly connections: KeyedClientConnection[];
  private started = false;
  private closing: Promise<void> | undefined;
  /** Acquires waiting for a connection to come up (only after a drop, so never on the hot path). */
  private readonly parked = new Map<PendingAcquire, Parked>();
  private readonly parkLimitMs: number;
  /** Releases waiting for their next try, with the timer that will send them. */
  private readonly retrying = new Map<PendingRelease, NodeJS.Timeout>();
  private readonly releaseRetryFor: number;
  private readonly releaseRetryInterval: number;
  private readonly releaseAttemptTimeout: number;

  /** `connector`: how connections reach a server; TCP unless a test passes an in-memory one. */
  constructor(options: KeyedClientOptions = {}, connector: LineConnector = socketConnector) {
    const addresses = normalizeAddresses(options.addresses ?? [`127.0.0.1:${DEFAULT_KEYED_PORT}`], DEFAULT_KEYED_PORT);
    // With one address, a second connection keeps requests flowing while the first reconnects.
    const homes = addresses.length === 1 ? [...addresses, ...addresses] : addresses;
    const hooks = {
      releaser: this,
      orphaned: (requests: PendingRequest[], reason: Error, from: KeyedClientConnection, lostAt: Address) => this.orphaned(requests, reason, from, lostAt),
      usable: () => this.unpark(),
    };
    const connectionOptions = {
      reconnectIntervalMs: options.reconnectInterval ?? 3000,
      connectTimeoutMs: options.connectTimeout ?? 3000,
      clientName: resolveClientName(options.clientName),
      connector,
    };
    this.connections = homes.map((home) => new KeyedClientConnection(home, hooks, connectionOptions));
    this.parkLimitMs = connectionOptions.reconnectIntervalMs + connectionOptions.connectTimeoutMs;
    this.releaseRetryFor = options.releaseRetryFor ?? 5000;
    this.releaseRetryInterval = options.releaseRetryInterval ?? 200;
    this.releaseAttemptTimeout = options.releaseAttemptTimeout ?? 1000;
  }

  /**
   * Queues for `key` and resolves with the grant. Rejects with LockTimeoutError when the server
   * answers `T` or a finite wait runs past its client deadline, with a BatonError for an `E`
   * reply, or after every connection dropped under it.
   */
  acquire(key: string, options: AcquireOptions): Promise<KeyedGrant> {
    if (this.closing) return Promise.reject(clientClosed());
    let leaseWire: string;
    let waitWire: string;
    try {
      requireValidLockName(key);
      leaseWire = leaseToWireSeconds(options.lease);
      waitWire = waitToWireSeconds(options.wait);
    } catch (error) {
      return Promise.reject(error);
    }
    const waitMs = waitWire === '0' ? Infinity : (options.wait ?? Infinity);
    const startedAt = performance.now();
    const triesLeft = this.connections.length;
    return new Promise<KeyedGrant>((resolve, reject) => {
      const request: PendingAcquire = {
        op: 'A',
        slot: `A ${key}`,
        key,
        leaseWire,
        waitMs,
        startedAt,
        waitWire,
        triesLeft,
        oldestSince: undefined,
        timer: undefined,
        resolve: (grant) => {
          clearTimeout(request.timer);
          resolve(grant);
        },
        reject: (error) => {
          clearTimeout(request.timer);
          reject(error);
        },
      };
      // One deadline for the whole acquire, however often it moves to another connection. Past
      // what a timer can hold (~24.8 days) a wait is as good as forever and gets none.
      const deadline = acquireDeadlineMs(waitMs);
      if (deadline <= MAX_TIMER_MS) request.timer = setTimeout(this.acquireDue, deadline, request);
      this.sendAcquire(request, undefined);
    });
  }

  /**
   * Releases `token` on `key`: true when released, false when the token no longer held it. An
   * attempt whose answer was lost is retried, and gets `STALE` if that attempt did release: so
   * false means "released, or no longer held".
   */
  release(key: string, token: bigint): Promise<boolean> {
    return this.releaseVia(undefined, key, token);
  }

  /** @internal Used by KeyedGrant, which knows the connection that granted it. */
  releaseVia(via: object | undefined, key: string, token: bigint): Promise<boolean> {
    if (this.closing) return Promise.reject(clientClosed());
    try {
      requireValidLockName(key);
    } catch (error) {
      return Promise.reject(error);
    }
    const startedAt = performance.now();
    return new Promise<boolean>((resolve, reject) => {
      const request: PendingRelease = {
        op: 'R',
        slot: `R ${key}`,
        key,
        token,
        startedAt,
        via,
        lostOn: undefined,
        timer: undefined,
        resolve: (released) => {
          clearTimeout(request.timer);
          resolve(released);
        },
        reject: (error) => {
          clearTimeout(request.timer);
          reject(error);
        },
      };
      this.sendRelease(request, undefined);
    });
  }

  /**
   * Runs `work` while holding `key` and releases afterwards. If `work` throws, that error wins
   * over any release failure; otherwise a failed release rejects (a STALE release does not).
   */
  async withLock<T>(key: string, options: AcquireOptions, work: (grant: KeyedGrant) => Promise<T> | T): Promise<T> {
    const grant = await this.acquire(key, options);
    let result: T;
    try {
      result = await work(grant);
    } catch (error) {
      await grant.release().catch(() => undefined);
      throw error;
    }
    await grant.release();
    return result;
  }

  /** Fails pending requests and closes every connection. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const reason = clientClosed();
    for (const [request, timer] of this.retrying) {
      clearTimeout(timer);
      request.reject(reason);
    }
    this.retrying.clear();
    for (const [request, { timer }] of this.parked) {
      clearTimeout(timer);
      request.reject(reason);
    }
    this.parked.clear();
    await Promise.all(this.connections.map((connection) => connection.close(reason)));
  }

  /**
   * `reason`: why the request is being re-sent, if it is; built only when it fails (an Error's
   * stack costs more than the send). `lostAt`: the node it was just lost on, when it was.
   */
  private sendAcquire(request: PendingAcquire, reason: Error | undefined, lostAt?: Address): void {
    const connection = lostAt === undefined ? this.pick(undefined) : this.pickAwayFrom(lostAt);
    if (connection) connection.send(request);
    // Connections that are down, or that a redirect led to the node just lost, come back (home)
    // by themselves: wait for one rather than fail.
    else if (this.connections.some((c) => c.state === 'down' || (lostAt !== undefined && c.reachedOnlyByRedirect(lostAt)))) {
      this.park(request, reason ?? connectionLost(NO_CONNECTION), lostAt);
    } else request.reject(reason ?? connectionLost(NO_CONNECTION));
  }

  /**
   * No connection is up, but some will reconnect (a failover: the connections that were on the
   * dead node are coming home, or asking a standby again): the acquire waits for one, within its
   * own wait and at most one reconnect interval plus a connect timeout, instead of failing at once.
   * `lostAt`: the node it was just lost on, which unpark keeps it away from too.
   */
  private park(request: PendingAcquire, reason: Error, lostAt: Address | undefined): void {
    const waitLeft = request.waitMs - (performance.now() - request.startedAt);
    const ms = Math.max(0, Math.min(this.parkLimitMs, waitLeft));
    const timer = setTimeout(() => {
      this.parked.delete(request);
      request.reject(reason);
    }, ms);
    this.parked.set(request, { timer, lostAt });
  }

  /**
   * A connection is connecting again. An acquire lost with a node still keeps away from the
   * connections a redirect had led to that node: one comes home while another is still open
   * there (the dying process has not closed that socket yet), and the acquire sent on the open
   * one would spend a try (with two connections, its last) on the dead node. With only such
   * connections, or down ones, it stays parked, under the timer it was parked with.
   */
  private unpark(): void {
    if (this.parked.size === 0) return;
    const now = performance.now();
    const waiting = [...this.parked];
    this.parked.clear();
    for (const [request, parked] of waiting) {
      const away = parked.lostAt === undefined ? undefined : this.pickAwayFrom(parked.lostAt);
      if (parked.lostAt !== undefined && away === undefined) {
        this.parked.set(request, parked);
        continue;
      }
      clearTimeout(parked.timer);
      if (!shrinkWait(request, now, waitToWireSeconds)) request.reject(new LockTimeoutError(request.key, request.waitMs));
      else if (away !== undefined) away.send(request);
      else this.sendAcquire(request, undefined);
    }
  }

  private sendRelease(request: PendingRelease, reason: Error | undefined): void {
    const connection = this.pick(request.via, request.lostOn);
    if (!connection) {
      this.retryReleaseLater(request, reason ?? connectionLost(NO_CONNECTION));
      return;
    }
    connection.send(request);
    // Never past the retry window (but long enough for a live server to answer), so a release
    // settles about when its retries run out.
    const windowLeft = this.releaseRetryFor - (performance.now() - request.startedAt);
    const timeout = Math.min(this.releaseAttemptTimeout, Math.max(windowLeft, this.releaseRetryInterval));
    request.timer = setTimeout(this.releaseOverdue, timeout, request, timeout);
  }

  /** A finite-wait acquire reached its deadline: first read the replies already received. */
  private readonly acquireDue = (request: PendingAcquire): void => {
    request.timer = undefined;
    setImmediate(this.checkAcquire, request);
  };

  private readonly checkAcquire = (request: PendingAcquire): void => {
    if (!this.connections.some((connection) => connection.holds(request))) return; // settled meanwhile
    const graceLeft = acquireGraceLeftMs(request, performance.now());
    if (graceLeft > 0) {
      request.timer = setTimeout(this.acquireDue, graceLeft, request);
      return;
    }
    // Overdue: the server is stalled or the link is dead. Dropping the connection is what makes
    // the server forget the queued request.
    const waited = Math.round(performance.now() - request.startedAt);
    this.abandon(request, `no answer to acquire ${JSON.stringify(request.key)} within ${waited} ms`);
    request.reject(new LockTimeoutError(request.key, request.waitMs));
  };

  /** A release attempt got no answer in time: it failed, and the retries go on. */
  private readonly releaseOverdue = (request: PendingRelease, timeoutMs: number): void => {
    request.timer = undefined;
    const why = `no answer to release ${JSON.stringify(request.key)} within ${Math.round(timeoutMs)} ms`;
    const where = this.abandon(request, why);
    this.retryReleaseLater(request, errorWithText('io-timeout', where ? `${where}: ${why}` : why));
  };

  /** Takes `request` off its connection and drops that connection; returns its address. */
  private abandon(request: PendingRequest, why: string): string | undefined {
    for (const connection of this.connections) {
      const where = connection.abandon(request, why);
      if (where === undefined) continue;
      if (request.op === 'R') request.lostOn = connection;
      return where;
    }
    return undefined;
  }

  /** Requests from a connection that dropped: acquires move on, releases retry later. */
  private orphaned(requests: PendingRequest[], reason: Error, from: KeyedClientConnection, lostAt: Address): void {
    const now = performance.now();
    for (const request of requests) {
      if (request.op === 'R') {
        clearTimeout(request.timer); // that attempt is over: no answer can come
        request.lostOn = from;
      }
      if (this.closing) request.reject(clientClosed());
      else if (request.op === 'R') this.retryReleaseLater(request, reason);
      else if (--request.triesLeft <= 0) request.reject(reason);
      else if (!shrinkWait(request, now, waitToWireSeconds)) request.reject(new LockTimeoutError(request.key, request.waitMs));
      else this.sendAcquire(request, reason, lostAt);
    }
  }

  private retryReleaseLater(request: PendingRelease, reason: Error): void {
    if (performance.now() - request.startedAt + this.releaseRetryInterval > this.releaseRetryFor) {
      request.reject(reason);
      return;
    }
    this.retrying.set(request, setTimeout(this.retryRelease, this.releaseRetryInterval, request, reason));
  }

  private readonly retryRelease = (request: PendingRelease, reason: Error): void => {
    this.retrying.delete(request);
    this.sendRelease(request, reason);
  };

  /**
   * The first open connection in address order, else one still connecting (its socket holds the
   * bytes until it is up), else none. `preferred` wins when it is open. Not round-robin: requests
   * made in one turn then leave in one write and come back in one read (alternating split a batch
   * of 16 into 8 + 8 and doubled the server's syscalls); the other connections stand by for when
   * the first one drops.
   */
  private pick(preferred: object | undefined, avoid?: object): KeyedClientConnection | undefined {
    if (!this.started) {
      this.started = true;
      for (const connection of this.connections) connection.start();
    }
    const count = this.connections.length;
    let fallback = -1;
    for (const connection of this.connections) {
      if (connection === preferred && connection !== avoid && connection.state === 'open') return connection;
    }
    // A connection that just lost an attempt (it may have come straight back to the same
    // failing server) comes last: any other open one is tried first.
    const otherOpen = avoid !== undefined && this.connections.some((c) => c !== avoid && c.state === 'open');
    for (let index = 0; index < count; index++) {
      const state = this.connections[index]?.state;
      if (otherOpen && this.connections[index] === avoid) continue;
      if (state === 'open') return this.connections[index];
      if (state === 'connecting' && fallback < 0) fallback = index;
    }
    return fallback < 0 ? undefined : this.connections[fallback];
  }

  /**
   * pick, for an acquire just lost on node `lostAt`: a connection that reached that node only
   * through a standby's `M` is left out. When the node died (kill -9), every connection a
   * redirect had led there dies with it, each a moment later, and moving the acquire along them
   * spent all its tries on one death within a millisecond; it waits for one to come home instead.
   * Kept apart from pick so that the pick of every other request stays as it was.
   */
  private pickAwayFrom(lostAt: Address): KeyedClientConnection | undefined {
    let fallback: KeyedClientConnection | undefined;
    for (const connection of this.connections) {
      if (connection.reachedOnlyByRedirect(lostAt)) continue;
      if (connection.state === 'open') return connection;
      if (connection.state === 'connecting') fallback ??= connection;
    }
    return fallback;
  }
}
