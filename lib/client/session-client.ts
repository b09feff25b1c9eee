// The session-protocol client: finds a server that will hold a claim for us (following
// REDIRECTs, moving down the address list when a server goes away) and hands out held leases.
// A lease is resumable by default (each claim gets a random claim key): when its node hands off
// or dies, the connection takes the claim up again on the node that has it (session-client-connection.ts)
// without aborting the work, within the lease. Losing it aborts its signal.
import { DEFAULT_SESSION_PORT, normalizeAddresses } from './address.ts';
import type { Address, AddressInput } from './address.ts';
import { SessionClientConnection } from './session-client-connection.ts';
import type { SessionHooks, SessionLease } from './session-client-connection.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { clientClosed, errorWithText } from './client-errors.ts';
import { checkWaitMs } from './session-wait.ts';
import { sessionLeaseMs } from '../protocol/duration-text.ts';
import { requireValidLockName } from './lock-names.ts';
import { newClaimKey } from './claim-key.ts';
import { resolveClientName } from './default-client-name.ts';
import type { LineConnector } from './line-connector.ts';
import { socketConnector } from './socket-connector.ts';

export interface SessionClientOptions extends SessionHooks {
  /** The servers of one Baton cluster; default 127.0.0.1:7071. */
  readonly addresses?: readonly AddressInput[];
  /** The floor of the heartbeat interval, in ms (default 50). */
  readonly minHeartbeatInterval?: number;
  /** How long a connect may take, in ms (default 3000). */
  readonly connectTimeout?: number;
  /** How long to keep reconnecting while no server answers at all, in ms (default 5000). */
  readonly reconnectFor?: number;
  /**
   * Claims survive a handoff or a failover of the active node (default true): ACQUIRE sends a
   * random claim key, and the claim is RESUMEd on the new active. false speaks the seed protocol.
   */
  readonly resumable?: boolean;
  /**
   * The servers' `--max-park` in ms (default 60000, the server's default): between connections a
   * resumable claim is kept at most this long, so the work is aborted by 0.8 x min(lease, this)
   * after the last confirmation when no node answers the RESUME. Never set it above the servers'.
   */
  readonly maxPark?: number;
  /**
   * The identity shown to operators for this client's claims (session `CLIENT`): default
   * `<user>@<host> pid <pid>`; null sends none. A bad one throws BatonError `bad-identity`.
   */
  readonly clientName?: string | null;
}

export interface SessionOptions extends SessionHooks {
  /** The lease in whole ms: the server frees the lock after this long without hearing from us. */
  readonly lease: number;
  /**
   * Give up with LockTimeoutError if not holding the lock within this many ms. 0, undefined or
   * Infinity: wait forever (as for the keyed client and `baton run --wait 0`).
   */
  readonly wait?: number;
}

export interface HoldContext {
  /** Aborts the moment ownership is no longer confirmed; stop touching the resource then. */
  readonly signal: AbortSignal;
  readonly token: bigint;
}

/** Redirects in a row before we call it a loop. */
const MAX_REDIRECTS = 8;
/** Pause after a whole pass over the addresses found no server, so a restart is not hammered. */
const PASS_PAUSE_MS = 200;

/** A pause on the global setTimeout (not node:timers/promises'), which tests' fake timers also drive. */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class SessionClient {
  private readonly addresses: Address[];
  /** Where the last claim succeeded; the next one starts there. */
  private preferred = 0;
  private readonly live = new Set<SessionClientConnection>();
  private closed = false;
  private readonly clientName: string | null;

  /** `connector`: how connections reach a server; TCP unless a test passes an in-memory one. */
  constructor(
    private readonly options: SessionClientOptions = {},
    private readonly connector: LineConnector = socketConnector,
  ) {
    this.addresses = normalizeAddresses(options.addresses ?? [`127.0.0.1:${DEFAULT_SESSION_PORT}`], DEFAULT_SESSION_PORT);
    if (options.maxPark !== undefined && !(options.maxPark > 0 && Number.isFinite(options.maxPark))) {
      throw new RangeError(`maxPark must be a positive number of ms, got ${options.maxPark}`);
    }
    this.clientName = resolveClientName(options.clientName);
  }

  /**
   * Holds `name` while `work` runs and releases it afterwards; resolves to what `work` returns.
   * The work should watch `signal`: it aborts when ownership is lost while the work runs.
   */
  async hold<T>(name: string, options: SessionOptions, work: (context: HoldContext) => Promise<T> | T): Promise<T> {
    const lease = await this.open(name, options);
    try {
      return await work({ signal: lease.signal, token: lease.token });
    } finally {
      await lease.close();
    }
  }

  /** Waits until `name` is held and returns the lease; the caller must close() it. */
  async open(name: string, options: SessionOptions): Promise<SessionLease> {
    if (this.closed) throw clientClosed();
    requireValidLockName(name);
    const leaseMs = sessionLeaseMs(options.lease);
    const waitMs = checkWaitMs(options.wait);
    const startedAt = performance.now();
    const count = this.addresses.length;
    let index = this.preferred;
    let address = this.addressAt(index);
    let redirects = 0;
    let lastAnswerAt = startedAt;
    let unansweredInRow = 0;
    for (;;) {
      if (this.closed) throw clientClosed();
      const left = waitMs - (performance.now() - startedAt);
      if (left <= 0) throw new LockTimeoutError(name, waitMs);
      const attempt = this.attempt(address, name, leaseMs, left, options);
      const outcome = await attempt.ready;
      switch (outcome.kind) {
        case 'held':
          this.preferred = index;
          return attempt;
        case 'timed-out':
          throw new LockTimeoutError(name, waitMs);
        case 'failed':
          throw outcome.reason;
        case 'redirect':
          if (++redirects > MAX_REDIRECTS) throw errorWithText('protocol-error', `more than ${MAX_REDIRECTS} redirects in a row`);
          address = outcome.address;
          break;
        case 'retry': {
          // Server trouble (going away, gone, silent) before we held anything: queue anew at
          // once on the next address, or the same one when there is only one.
          const now = performance.now();
          redirects = 0;
          if (outcome.answered) {
            lastAnswerAt = now;
            unansweredInRow = 0;
          } else {
            unansweredInRow++;
          }
          if (now - lastAnswerAt >= (this.options.reconnectFor ?? 5000)) throw outcome.reason;
          index = (index + 1) % count;
          address = this.addressAt(index);
          if (unansweredInRow >= count) {
            unansweredInRow = 0;
            await sleep(Math.min(PASS_PAUSE_MS, Math.max(0, left)));
          }
          break;
        }
      }
    }
  }

  /** Closes every lease and pending claim of this client. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live].map((connection) => connection.close()));
  }

  private attempt(address: Address, name: string, leaseMs: number, giveUpAfterMs: number, options: SessionOptions): SessionClientConnection {
    const onHeartbeat = options.onHeartbeat ?? this.options.onHeartbeat;
    const onWaiting = options.onWaiting ?? this.options.onWaiting;
    const connection: SessionClientConnection = new SessionClientConnection(address, {
      name,
      leaseMs,
      minHeartbeatIntervalMs: this.options.minHeartbeatInterval ?? 50,
      connectTimeoutMs: this.options.connectTimeout ?? 3000,
      giveUpAfterMs,
      clientName: this.clientName,
      connector: this.connector,
      ...(onHeartbeat ? { onHeartbeat } : {}),
      ...(onWaiting ? { onWaiting } : {}),
      onEnded: () => this.live.delete(connection),
      ...(this.options.resumable === false
        ? {}
        : { claimKey: newClaimKey(), resumeAddresses: this.addresses, ...(this.options.maxPark === undefined ? {} : { maxParkMs: this.options.maxPark }) }),
    });
    this.live.add(connection);
    return connection;
  }

  private addressAt(index: number): Address {
    const address = this.addresses[index];
    if (!address) throw new Error(`no address at ${index}`); // index is always taken mod count
    return address;
  }
}
