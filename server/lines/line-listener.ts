// A TCP listener for one line protocol: accepts connections up to a limit (refusing the rest
// with the protocol's own error line), tracks them, routes them as the node's cluster role says
// (serve, redirect or hold: routing.ts), runs the io-timeout watchdog, and closes them all at
// shutdown. With socket-transport.ts, the only place besides http-server.ts that touches node:net.
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Clock } from '../../lib/engine/clock.ts';
import type { Logger } from 'pino';
import type { ConnectionContext, LineConnection } from './line-connection.ts';
import type { FlushScheduler } from './flush-scheduler.ts';
import type { LineTransport } from './line-transport.ts';
import { SocketTransport } from './socket-transport.ts';
import { type ConnectionSlots, MAX_REFUSING } from './open-files.ts';
import { SERVE, type Route, sameRoute } from './routing.ts';

export interface LineListenerOptions {
  host: string;
  port: number;
  maxConnections: number;
  ioTimeoutMs: number;
  clock: Clock;
  flusher: FlushScheduler;
  /** Called after each chunk of input anywhere (wakes the engine timer). */
  afterInput(): void;
  /** Where refused connections and misbehaving peers are logged. */
  logger?: Logger;
  /** Protocol name for log lines. */
  protocol?: string;
  /** What the listener does with clients at first (routing.ts); serve if not given. */
  route?: Route;
  /** How long a connection may be held before it gets the going-away goodbye; 5,000 ms if not given. */
  holdMaxMs?: number;
  /** Refused connections that may be saying goodbye at once; beyond that they are dropped. MAX_REFUSING if not given. */
  maxRefusing?: number;
  /** Open connections shared with the other protocol's listener, against the open-file limit. */
  slots?: ConnectionSlots;
}

/** How often a watchdog checks a `timeoutMs` bound: a quarter of it, between 25 ms and 1 s. */
export function watchdogInterval(timeoutMs: number): number {
  return Math.min(1_000, Math.max(25, Math.floor(timeoutMs / 4)));
}

export class LineListener<C extends LineConnection> {
  readonly connections = new Set<C>();
  private readonly server: Server;
  private readonly ctx: ConnectionContext;
  private watchdog: NodeJS.Timeout | null = null;
  private accepting = true;
  private route: Route;
  private readonly holdMaxMs: number;
  /** Refused sockets still closing. */
  private refusing = 0;
  /** Refusals since the last refusal log line; logged at most once a second. */
  private refused = 0;
  private refusalLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly opts: LineListenerOptions,
    create: (transport: LineTransport, ctx: ConnectionContext) => C,
    /** The line sent to a connection refused for being over the limit. */
    private readonly refusal: string,
  ) {
    this.route = opts.route ?? SERVE;
    this.holdMaxMs = opts.holdMaxMs ?? 5_000;
    this.ctx = {
      clock: opts.clock,
      flusher: opts.flusher,
      afterInput: opts.afterInput,
      onGone: (conn) => {
        if (this.connections.delete(conn as C) && opts.slots !== undefined) opts.slots.open--;
      },
      report: (conn, what) => opts.logger?.warn({ protocol: opts.protocol, peer: conn.address, reason: what }, `closing connection: ${what}`),
    };
    this.server = createServer({ noDelay: true, allowHalfOpen: true }, (socket) => {
      const slots = opts.slots;
      if (!this.accepting || this.connections.size >= opts.maxConnections || (slots !== undefined && slots.open >= slots.max)) {
        socket.on('error', () => {});
        this.logRefusal();
        // A flood of refused sockets must not hold file descriptors: past a small number still
        // saying goodbye, refuse without a word; each goodbye gets a fixed io-timeout to finish.
        if (this.refusing >= (opts.maxRefusing ?? MAX_REFUSING)) {
          socket.destroy();
          return;
        }
        this.refusing++;
        socket.once('close', () => this.refusing--);
        socket.end(this.refusal);
        setTimeout(() => socket.destroy(), opts.ioTimeoutMs).unref();
        return;
      }
      const conn = create(new SocketTransport(socket), this.ctx);
      this.connections.add(conn);
      if (slots !== undefined) slots.open++;
      // A redirect at connect never closes: a keyed client reads its M, a session its REDIRECT
      // after the first line (closing before that line could reset the connection under it).
      if (this.route.kind !== 'serve') conn.applyRoute(this.route, opts.clock.now(), true);
    });
  }

  async listen(): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.opts.host, port: this.opts.port }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const every = watchdogInterval(Math.min(this.opts.ioTimeoutMs, this.holdMaxMs));
    this.watchdog = setInterval(() => this.sweep(), every);
    this.watchdog.unref();
    return this.server.address() as AddressInfo;
  }

  get address(): AddressInfo {
    return this.server.address() as AddressInfo;
  }

  /**
   * Switches what the listener does with its clients, open and new (routing.ts). To redirect,
   * every open connection (a session: once its first line is in) gets the redirect line after
   * what is already queued, and closes gracefully; claims the engine reset ended get no T or
   * ERROR line. To hold, reading stops (for at most holdMaxMs); leaving a hold reads on in order.
   */
  setRoute(route: Route): void {
    if (sameRoute(route, this.route)) return;
    this.route = route;
    const now = this.opts.clock.now();
    // Two steps, as at closeAll: no connection takes a grant once any of them starts closing.
    const leaving: C[] = [];
    for (const conn of this.connections) if (conn.applyRoute(route, now, false)) leaving.push(conn);
    for (const conn of leaving) conn.closeRedirected();
    this.opts.flusher.flushAll();
    this.opts.afterInput();
  }

  /**
   * Sends the open connections that must leave for a redirect there (for sessions: those with a
   * claim), keeping the route for the rest and for new ones. A graceful handoff ends its sessions
   * this way before the successor can grant their locks, so each holder is told first. Those
   * `spare` picks (resumable sessions, which move with the handoff instead) keep the route.
   */
  redirectOpen(route: Extract<Route, { kind: 'redirect' }>, spare?: (conn: C) => boolean): void {
    const now = this.opts.clock.now();
    const leaving: C[] = [];
    for (const conn of this.connections) {
      if (spare?.(conn) !== true && conn.applyRoute(route, now, false)) leaving.push(conn);
      else conn.applyRoute(this.route, now, false);
    }
    for (const conn of leaving) conn.closeRedirected();
    this.opts.flusher.flushAll();
    this.opts.afterInput();
  }

  get currentRoute(): Route {
    return this.route;
  }

  /** Stops accepting; existing connections stay until closeAll(). */
  stopAccepting(): Promise<void> {
    this.accepting = false;
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Closes every connection with its protocol's goodbye line; waiters leave their queues before holders let go. */
  closeAll(): void {
    for (const conn of this.connections) conn.beginClose();
    for (const conn of this.connections) conn.close(conn.goodbye());
    this.opts.flusher.flushAll();
    this.opts.afterInput();
  }

  destroyAll(): void {
    for (const conn of this.connections) conn.destroy();
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  private logRefusal(): void {
    this.refused++;
    const now = this.opts.clock.now();
    if (now - this.refusalLoggedAt < 1_000) return;
    this.opts.logger?.warn(
      { protocol: this.opts.protocol, refused: this.refused, open: this.connections.size, max: this.opts.maxConnections, accepting: this.accepting },
      'refused connections: too many connections or shutting down',
    );
    this.refused = 0;
    this.refusalLoggedAt = now;
  }

  private sweep(): void {
    const now = this.opts.clock.now();
    const holdMaxMs = this.route.kind === 'hold' ? (this.route.maxMs ?? this.holdMaxMs) : this.holdMaxMs;
    for (const conn of this.connections) conn.checkIo(now, this.opts.ioTimeoutMs, holdMaxMs);
    this.opts.flusher.flushAll();
    // Connections closed here may have moved the engine's next deadline.
    this.opts.afterInput();
  }
}
