// A scripted line-protocol server on 127.0.0.1 for the client tests: it records every line a
// client sends and answers only as the test's script says, so a test can pin the exact wire
// traffic and play replies out of order, late, or not at all. It speaks no protocol itself,
// so the keyed and the session client tests share it.
import net from 'node:net';
import { afterEach } from 'vitest';

export interface FakeConnection {
  readonly socket: net.Socket;
  /** Every line this connection sent, without its "\n", in arrival order. */
  readonly lines: string[];
  /** Writes the lines, each ending "\n", in one write; does nothing once the socket is gone. */
  send(...lines: string[]): void;
}

/** What the server does; both hooks are optional, and a server without them never answers. */
export interface LineScript {
  onConnect?(connection: FakeConnection): void;
  onLine?(connection: FakeConnection, line: string): void;
}

export interface FakeLineServer {
  readonly port: number;
  /** `127.0.0.1:<port>`, as the clients take addresses. */
  readonly address: string;
  readonly connections: FakeConnection[];
  /** Every line from every connection, in arrival order. */
  readonly lines: string[];
  /** Resolves once `condition()` holds; checked after every connect, line and close, not on a timer. */
  until(condition: () => boolean): Promise<void>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

async function startFakeLineServer(script: LineScript, port: number): Promise<FakeLineServer> {
  const connections: FakeConnection[] = [];
  const lines: string[] = [];
  let waiters: (() => boolean)[] = [];
  const check = (): void => {
    waiters = waiters.filter((settled) => !settled());
  };
  const listener = net.createServer((socket) => {
    let inbox = '';
    const connection: FakeConnection = {
      socket,
      lines: [],
      send: (...out) => {
        if (!socket.destroyed) socket.write(out.map((line) => `${line}\n`).join(''));
      },
    };
    connections.push(connection);
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('close', check);
    socket.on('data', (chunk: string) => {
      inbox += chunk;
      for (let newline = inbox.indexOf('\n'); newline >= 0; newline = inbox.indexOf('\n')) {
        const line = inbox.slice(0, newline);
        inbox = inbox.slice(newline + 1);
        connection.lines.push(line);
        lines.push(line);
        script.onLine?.(connection, line);
        check();
      }
    });
    script.onConnect?.(connection);
    check();
  });
  await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  const bound = (listener.address() as net.AddressInfo).port;
  return {
    port: bound,
    address: `127.0.0.1:${bound}`,
    connections,
    lines,
    until: (condition) =>
      new Promise((resolve) => {
        waiters.push(() => {
          if (!condition()) return false;
          resolve();
          return true;
        });
        check();
      }),
    close: async () => {
      for (const connection of connections) connection.socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

/**
 * Fake servers, and the clients under test, that are closed after each test of the calling
 * file; call it once at the file's top level. Clients close first: a server going away under a
 * live client would set off the client's reconnects and failover while the test is ending.
 */
export function fakeLineServers<Client extends { close(): Promise<unknown> }>() {
  const servers: FakeLineServer[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return {
    /** Listens on `port` (0: any free one); pass the port of a closed server to stand in for it. */
    start: async (script: LineScript, port = 0): Promise<FakeLineServer> => {
      const server = await startFakeLineServer(script, port);
      servers.push(server);
      return server;
    },
    /** Registers a client for closing and returns it. */
    track: <Made extends Client>(client: Made): Made => {
      clients.push(client);
      return client;
    },
  };
}
