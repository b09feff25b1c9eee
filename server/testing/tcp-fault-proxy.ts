// A TCP forwarder that a test can cut, for partitions between real processes without network
// namespaces (which need root). Each accepted connection gets its own upstream connection to
// the target; block() drops every pair at once and refuses new ones until heal(), which is
// what a node sees when a link breaks: the connection goes away and redials fail.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface ProxyTarget {
  host: string;
  port: number;
}

export interface TcpFaultProxyOptions {
  /** 127.0.0.1 if not given. */
  listenHost?: string;
  /** 0 (a free port) if not given. */
  listenPort?: number;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Black-holed: the client side stays open and silent whatever happens upstream. */
  silent: boolean;
}

export class TcpFaultProxy {
  private blockedNow = false;
  private blackholed = false;
  /** Connections accepted while black-holed: held open, never answered. */
  private readonly silent = new Set<Socket>();
  private readonly pairs = new Set<Pair>();
  private closing: Promise<void> | undefined;
  /** Connections accepted while blocked and dropped at once; lets a test see that redials happen. */
  refused = 0;
  /** Connections forwarded since the start. */
  forwarded = 0;

  private constructor(
    private readonly server: Server,
    readonly target: ProxyTarget,
    readonly host: string,
    readonly port: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(target: ProxyTarget, options: TcpFaultProxyOptions = {}): Promise<TcpFaultProxy> {
    const host = options.listenHost ?? '127.0.0.1';
    // Half-open off: a FIN from either side ends the pair, as a direct connection would.
    const server = createServer({ allowHalfOpen: false, pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listenPort ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as { port: number };
    return new TcpFaultProxy(server, target, host, port);
  }

  get blocked(): boolean {
    return this.blockedNow;
  }

  /** Connections forwarded right now. */
  get open(): number {
    return this.pairs.size;
  }

  /** Cuts every open connection (both sides) and refuses new ones until heal(). */
  block(): void {
    this.blockedNow = true;
    for (const pair of this.pairs) this.drop(pair);
  }

  /**
   * A host gone without a word (power loss): open connections stay open but nothing crosses
   * them, and new ones are accepted and then left silent, so only timeouts can tell. heal()
   * ends it the way the host's return would: the old connections are reset, new ones forwarded.
   */
  blackhole(): void {
    this.blackholed = true;
    for (const pair of this.pairs) {
      pair.silent = true;
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      pair.client.pause();
      pair.upstream.pause();
    }
  }

  /**
   * New connections are forwarded again, but those black-holed stay silent (a stateful firewall
   * or NAT that dropped them): only a node's own timeouts can end them.
   */
  forwardNewOnly(): void {
    this.blackholed = false;
    this.blockedNow = false;
    for (const socket of this.silent) socket.destroy();
    this.silent.clear();
  }

  /** Black-holed connections still open on the client side (a test can see the node gave up on them). */
  get silentPairs(): number {
    let n = 0;
    for (const pair of this.pairs) if (pair.silent && !pair.client.destroyed) n++;
    return n;
  }

  heal(): void {
    this.blockedNow = false;
    if (this.blackholed) {
      this.blackholed = false;
      for (const pair of this.pairs) this.drop(pair);
      for (const socket of this.silent) socket.destroy();
      this.silent.clear();
    }
  }

  /** Stops listening and drops every connection. Safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.blockedNow = true;
      for (const pair of this.pairs) this.drop(pair);
      for (const socket of this.silent) socket.destroy();
      this.silent.clear();
      this.server.close(() => resolve());
    });
    return this.closing;
  }

  private accept(client: Socket): void {
    if (this.blackholed) {
      client.on('error', () => {});
      this.silent.add(client);
      return;
    }
    if (this.blockedNow) {
      // Accept-then-destroy rather than stop listening: a closed port could be taken by
      // another process meanwhile, and the node's redial must fail either way.
      this.refused++;
      client.destroy();
      return;
    }
    this.forwarded++;
    client.setNoDelay(true);
    const upstream = connect({ host: this.target.host, port: this.target.port });
    upstream.setNoDelay(true);
    const pair: Pair = { client, upstream, silent: false };
    this.pairs.add(pair);
    // A black-holed pair outlives its upstream (the host died without a word to the client).
    const end = () => (pair.silent ? pair.upstream.destroy() : this.drop(pair));
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Writes to upstream before it connects are buffered by the socket.
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
