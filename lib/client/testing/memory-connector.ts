// A LineConnector with no socket under it, for the client's unit tests (the client's side of what
// server/testing/memory-transport.ts is for the server): the test plays the servers. An address
// answers only once a test listens on it, with a script like fake-line-server.ts's; a connect to
// any other address is refused. Every line each side sends is recorded.
//
// Like a socket, nothing happens inside the call that caused it: a link opens, lines travel and
// closes arrive on a later microtask, in order. No timer is used, so under vi.useFakeTimers the
// client's reconnect, deadline and heartbeat timers move only when the test moves the clock.
import type { Address } from '../../protocol/address-text.ts';
import { formatAddress } from '../../protocol/address-text.ts';
import type { LineConnector, LineHandlers, LineLink } from '../line-connector.ts';

/** The server's end of one link. */
export interface MemoryServerConnection {
  /** Every line the client sent on this link, without its "\n", in order. */
  readonly lines: string[];
  /** The client closed the link, or the server did. */
  readonly closed: boolean;
  /** Sends the lines to the client, in order; nothing once the link is closed. */
  send(...lines: string[]): void;
  /** Closes the link as a server does (a FIN): the client sees a close without an error. */
  close(): void;
  /** Breaks the link (a reset): the client sees a close with an error. */
  reset(): void;
}

/** What a server does; a server without hooks accepts links and never answers. */
export interface MemoryScript {
  onConnect?(connection: MemoryServerConnection): void;
  onLine?(connection: MemoryServerConnection, line: string): void;
}

export interface MemoryServer {
  readonly connections: MemoryServerConnection[];
  /** Every line from every link, in arrival order. */
  readonly lines: string[];
}

export class MemoryConnector implements LineConnector {
  /** Every connect the client made ("host:port"), refused ones too, in order. */
  readonly dials: string[] = [];
  private readonly servers = new Map<string, { server: MemoryServer; script: MemoryScript }>();

  /** Makes `address` ("host:port") accept links, answered by `script`. */
  listen(address: string, script: MemoryScript = {}): MemoryServer {
    const server: MemoryServer = { connections: [], lines: [] };
    this.servers.set(address, { server, script });
    return server;
  }

  /** Stops listening on `address`: its open links are reset, and new connects are refused. */
  stop(address: string): void {
    const entry = this.servers.get(address);
    this.servers.delete(address);
    for (const connection of entry?.server.connections ?? []) connection.reset();
  }

  connect(address: Address, handlers: LineHandlers): LineLink {
    const where = formatAddress(address);
    this.dials.push(where);
    const link = new MemoryLink(address, handlers);
    queueMicrotask(() => {
      const entry = this.servers.get(where);
      if (entry === undefined) link.fail(new Error(`connect ECONNREFUSED ${where}`));
      else link.open(entry.server, entry.script);
    });
    return link;
  }
}

class MemoryLink implements LineLink {
  /** The server's end of this link, as its script sees it. */
  readonly peer: MemoryServerConnection;
  readonly closed: Promise<void>;
  private state: 'connecting' | 'open' | 'closed' = 'connecting';
  private resolveClosed!: () => void;
  /** Lines written and not yet handed to the server (before the link is open, or this tick's). */
  private outbox: string[] = [];
  private flushQueued = false;
  private server: MemoryServer | undefined;
  private script: MemoryScript = {};

  constructor(
    readonly address: Address,
    private readonly handlers: LineHandlers,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    const link = this; // the getter below has its own `this`
    this.peer = {
      lines: [],
      get closed() {
        return link.state === 'closed';
      },
      send: (...sent) => this.deliver(sent),
      close: () => this.fail(undefined),
      reset: () => this.fail(new Error(`read ECONNRESET ${formatAddress(address)}`)),
    };
  }

  open(server: MemoryServer, script: MemoryScript): void {
    if (this.state !== 'connecting') return; // destroyed while connecting
    this.state = 'open';
    this.server = server;
    this.script = script;
    server.connections.push(this.peer);
    this.handlers.onOpen();
    this.script.onConnect?.(this.peer);
    this.flush();
  }

  // The client's side (LineLink).

  write(line: string): void {
    this.outbox.push(line);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  writeNow(line: string): void {
    this.write(line);
  }

  end(): Promise<void> {
    this.flush();
    this.fail(undefined);
    return this.closed;
  }

  destroy(error?: Error): void {
    this.outbox = []; // as a socket drops what it has not written yet
    this.fail(error);
  }

  /** The server's lines, to the client on a later microtask. */
  private deliver(lines: string[]): void {
    queueMicrotask(() => {
      for (const line of lines) {
        // A handler may have closed the link (a redirect, a protocol error): it reads no more.
        if (this.state !== 'open') return;
        this.handlers.onLine(line);
      }
    });
  }

  /** Closes the link for both sides; the client hears of it on a later microtask, once. */
  fail(error: Error | undefined): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    queueMicrotask(() => {
      this.resolveClosed();
      this.handlers.onClose(error);
    });
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.state !== 'open') return;
    const out = this.outbox;
    this.outbox = [];
    for (const line of out) {
      // A line may carry several ("CLIENT x\nACQUIRE ..."), as the session client writes them.
      for (const one of line.split('\n')) {
        if (this.state !== 'open') return;
        this.peer.lines.push(one);
        this.server?.lines.push(one);
        this.script.onLine?.(this.peer, one);
      }
    }
  }
}
