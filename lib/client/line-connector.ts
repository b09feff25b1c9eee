// The client's seam to the network, as server/lines/line-transport.ts is the server's: a client
// connection asks a LineConnector for a LineLink to one server and speaks lines over it. The
// reconnect, redirect, pipelining and heartbeat logic above it never sees a socket, so tests run
// it over lib/client/testing/memory-connector.ts with fake timers. socket-connector.ts is the
// real one (TCP), and the default of KeyedClient and SessionClient.
import type { Address } from '../protocol/address-text.ts';

/** What a link tells the client connection that opened it. */
export interface LineHandlers {
  onOpen(): void;
  /** One line, without "\n" or "\r\n"; empty lines are skipped. */
  onLine(line: string): void;
  /** Called once, however the link ended (including a failed connect). */
  onClose(error: Error | undefined): void;
}

/** One line-speaking connection from this client to one server. */
export interface LineLink {
  readonly address: Address;
  /** Queues a line; all lines queued in one tick leave in one write. */
  write(line: string): void;
  /** Writes at once (after anything queued), for callers timing a round trip. */
  writeNow(line: string): void;
  /** Flushes, then closes gracefully; resolves once the link is closed. */
  end(): Promise<void>;
  destroy(error?: Error): void;
  /** Resolves when the link has closed, for whatever reason. */
  readonly closed: Promise<void>;
}

/** Opens links: a connect that fails or takes longer than `connectTimeoutMs` ends in onClose(error). */
export interface LineConnector {
  connect(address: Address, handlers: LineHandlers, connectTimeoutMs: number): LineLink;
}
