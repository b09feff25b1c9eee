import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LineClient, eventually } from './line-client.ts';
import { dialPeerTls, peerKey } from '../cluster/peer-tls.ts';
import { TcpFaultProxy } from './tcp-fault-proxy.ts';
import { pskIdentity } from './tls-psk-identity.ts';

const cleanups: Array<() => unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A line echo server that counts the connections it has open. */
async function echoServer(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { server, port: (server.address() as { port: number }).port, sockets };
}

/** The first line a connection sent: how the tests below name a dialler. */
const firstLine = (chunk: Buffer) => chunk.toString('utf8').split('\n')[0] ?? null;

async function proxyTo(port: number, identify?: (chunk: Buffer) => string | null): Promise<TcpFaultProxy> {
  const proxy = await TcpFaultProxy.start({ host: '127.0.0.1', port }, { identify });
  cleanups.push(() => proxy.close());
  return proxy;
}

async function open(port: number): Promise<LineClient> {
  const client = await LineClient.open(port, '127.0.0.1', { timeoutMs: 2_000 });
  cleanups.push(() => client.close());
  return client;
}

describe('TcpFaultProxy', () => {
  it('forwards bytes both ways', async () => {
    const echo = await echoServer();
    const proxy = await proxyTo(echo.port);
    const client = await open(proxy.port);
    client.send('hello', 'world');
    expect(await client.take(2)).toEqual(['hello', 'world']);
    expect(proxy.open).toBe(1);
  });

  it('block() cuts open connections on both sides', async () => {
    const echo = await echoServer();
    const proxy = await proxyTo(echo.port);
    const client = await open(proxy.port);
    client.send('ping');
    expect(await client.next()).toBe('ping');
    proxy.block();
    await client.waitClosed();
    await eventually(() => echo.sockets.size === 0, 2_000, 'the upstream side to close');
    expect(proxy.open).toBe(0);
  });

  it('refuses new connections while blocked, and forwards again after heal()', async () => {
    const echo = await echoServer();
    const proxy = await proxyTo(echo.port);
    proxy.block();
    const refused = await open(proxy.port);
    await refused.waitClosed();
    expect(proxy.refused).toBe(1);
    expect(echo.sockets.size).toBe(0);
    proxy.heal();
    const client = await open(proxy.port);
    client.send('back');
    expect(await client.next()).toBe('back');
  });

  it('closes the client side when the target refuses', async () => {
    const echo = await echoServer();
    const port = echo.port;
    await new Promise((resolve) => echo.server.close(resolve));
    const proxy = await proxyTo(port);
    const client = await open(proxy.port);
    await client.waitClosed();
    expect(proxy.open).toBe(0);
  });

  it('passes a close from the target on to the client', async () => {
    const echo = await echoServer();
    const proxy = await proxyTo(echo.port);
    const client = await open(proxy.port);
    client.send('x');
    await client.next();
    for (const socket of echo.sockets) socket.end();
    await client.waitClosed();
    await eventually(() => proxy.open === 0, 2_000, 'the pair to be dropped');
  });

  it('close() drops connections and stops listening', async () => {
    const echo = await echoServer();
    const proxy = await proxyTo(echo.port);
    const client = await open(proxy.port);
    await proxy.close();
    await client.waitClosed();
    await expect(LineClient.open(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  describe('cut()', () => {
    it('holds what the dialler sends one way while the target still reaches it, and delivers the held bytes on heal()', async () => {
      const echo = await echoServer();
      const proxy = await proxyTo(echo.port);
      const client = await open(proxy.port);
      client.send('before');
      expect(await client.next()).toBe('before');
      proxy.cut({ direction: 'to-target' });
      client.send('held');
      await expect(client.next(300)).rejects.toThrow();
      expect(proxy.open).toBe(1);
      // The target can still write to the dialler.
      for (const socket of echo.sockets) socket.write('from the target\n');
      expect(await client.next()).toBe('from the target');
      proxy.heal();
      expect(await client.next()).toBe('held');
    });

    it('holds what the target sends back while the dialler still reaches it', async () => {
      const received: string[] = [];
      const echo = await echoServer();
      const proxy = await proxyTo(echo.port);
      const client = await open(proxy.port);
      client.send('one');
      expect(await client.next()).toBe('one');
      for (const socket of echo.sockets) socket.on('data', (d: Buffer) => received.push(d.toString()));
      proxy.cut({ direction: 'from-target' });
      client.send('two');
      await eventually(() => received.join('').includes('two'), 2_000, 'the target to get "two"');
      await expect(client.next(300)).rejects.toThrow();
      proxy.heal();
      expect(await client.next()).toBe('two');
    });

    it("cuts only the named dialler's connections, open and new, both ways, until heal()", async () => {
      const echo = await echoServer();
      const proxy = await proxyTo(echo.port, firstLine);
      const [b, c] = [await open(proxy.port), await open(proxy.port)];
      b.send('b');
      c.send('c');
      expect([await b.next(), await c.next()]).toEqual(['b', 'c']);
      proxy.cut({ direction: 'both', from: 'b' });
      await b.waitClosed();
      const again = await open(proxy.port);
      again.send('b');
      await again.waitClosed();
      c.send('still');
      expect(await c.next()).toBe('still');
      proxy.heal();
      const healed = await open(proxy.port);
      healed.send('b');
      expect(await healed.next()).toBe('b');
    });

    it("holds one way only the named dialler's bytes on a connection opened during the cut", async () => {
      const echo = await echoServer();
      const proxy = await proxyTo(echo.port, firstLine);
      proxy.cut({ direction: 'from-target', from: 'b' });
      const [b, c] = [await open(proxy.port), await open(proxy.port)];
      b.send('b');
      c.send('c');
      expect(await c.next()).toBe('c');
      await expect(b.next(300)).rejects.toThrow();
      proxy.heal();
      expect(await b.next()).toBe('b');
    });
  });

  it("names a peer link's dialler from its TLS ClientHello (the PSK identity)", async () => {
    const first = new Promise<Buffer>((resolve) => {
      const server = createServer((socket) => {
        socket.once('data', (chunk: Buffer) => {
          resolve(chunk);
          socket.destroy();
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const tls = dialPeerTls('127.0.0.1', (server.address() as { port: number }).port, 'node-b', peerKey('an admin token of 32 characters..', 'node-b'));
        tls.on('error', () => {});
        cleanups.push(() => tls.destroy());
      });
      cleanups.push(() => new Promise((r) => server.close(r)));
    });
    expect(pskIdentity(await first)).toBe('node-b');
    expect(pskIdentity(Buffer.from('GET / HTTP/1.1\r\n'))).toBe(null);
    expect(pskIdentity((await first).subarray(0, 60))).toBe(null);
  });
});
