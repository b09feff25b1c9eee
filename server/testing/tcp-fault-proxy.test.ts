import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LineClient, eventually } from './line-client.ts';
import { TcpFaultProxy } from './tcp-fault-proxy.ts';

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

async function proxyTo(port: number): Promise<TcpFaultProxy> {
  const proxy = await TcpFaultProxy.start({ host: '127.0.0.1', port });
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
});
