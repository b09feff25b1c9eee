// A TCP forwarder that a test can cut, for partitions between real processes without network
// namespaces (which need root). Each accepted connection gets its own upstream connection to
// the target; block() drops every pair at once and refuses new ones until heal(), which is
// what a node sees when a link breaks: the connection goes away and redials fail. cut() does
// the same, or holds one direction only, for the connections of one dialler (named by
// `identify` from the first bytes it sent) or all of them.
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
  /** Names the dialler of a connection from the first bytes it sent (null: unknown), for cut({ from }). */
  identify?: (firstChunk: Buffer) => string | null;
}

/**
 * What cut() stops: `both` drops the connections and refuses new ones (block() for one dialler);
 * `to-target` holds the bytes the dialler sends, `from-target` the bytes sent back to it, while
 * the other direction flows. Held bytes are not lost: the socket is no longer read, so they wait
 * in the kernel's buffers and TCP's flow control stops the sender, as a link that drops packets
 * one way and retransmits them once healed.
 */
export type CutDirection = 'both' | 'to-target' | 'from-target';

export interface Cut {
  direction: CutDirection;
  /** Only the connections whose dialler `identify` named so; every connection if not given. */
  from?: string;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Black-holed: the client side stays open and silent whatever happens upstream. */
  silent: boolean;
  /** The dialler, as `identify` named it from its first bytes (null until then, or unknown). */
  from: string | null;
  /** The direction cut() holds on this pair, if any. */
  held: 'to-target' | 'from-target' | null;
}

export class TcpFaultProxy {
  private blockedNow = false;
  private blackholed = false;
  /** Connections accepted while black-holed: held open, never answered. */
  private readonly silent = new Set<Socket>();
  private readonly pairs = new Set<Pair>();
  private cuts: Cut[] = [];
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
    private readonly identify: ((firstChunk: Buffer) => string | null) | undefined,
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
    return new TcpFaultProxy(server, target, host, port, options.identify);
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

  /**
   * Cuts the links of one dialler (`from`) or all, both ways or one way (see CutDirection), open
   * ones and those accepted until heal(). Cuts add up (one per dialler); where two name the same
   * connection, the first one made applies.
   */
  cut(cut: Cut): void {
    this.cuts.push(cut);
    for (const pair of this.pairs) this.applyCut(pair);
  }

  /** The cuts in force. */
  get currentCuts(): readonly Cut[] {
    return this.cuts;
  }

  heal(): void {
    this.release();
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
    const pair: Pair = { client, upstream, silent: false, from: null, held: null };
    this.pairs.add(pair);
    // Named from its first bytes, seen beside the pipe (they are forwarded all the same): a cut
    // that names this dialler applies from there.
    const identify = this.identify;
    if (identify !== undefined)
      client.once('data', (chunk: Buffer) => {
        pair.from = identify(chunk);
        this.applyCut(pair);
      });
    // A black-holed pair outlives its upstream (the host died without a word to the client).
    const end = () => (pair.silent ? pair.upstream.destroy() : this.drop(pair));
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    // Writes to upstream before it connects are buffered by the socket.
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
    this.applyCut(pair);
  }

  /** Ends the cut: held directions flow again (what they held is delivered first). */
  private release(): void {
    this.cuts = [];
    for (const pair of this.pairs) {
      if (pair.held === null || pair.silent) continue;
      const [from, to] = pair.held === 'to-target' ? [pair.client, pair.upstream] : [pair.upstream, pair.client];
      pair.held = null;
      from.pipe(to);
      from.resume();
    }
  }

  /** Applies the cut in force to one pair (once its dialler is known, when a cut names one). */
  private applyCut(pair: Pair): void {
    if (pair.silent || pair.held !== null) return;
    const cut = this.cuts.find((c) => c.from === undefined || c.from === pair.from);
    if (cut === undefined) return;
    if (cut.direction === 'both') {
      this.drop(pair);
      return;
    }
    pair.held = cut.direction;
    const [from, to] = cut.direction === 'to-target' ? [pair.client, pair.upstream] : [pair.upstream, pair.client];
    from.unpipe(to);
    from.pause();
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
