import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEYED_GOODBYE, KEYED_REFUSAL } from './keyed-connection.ts';
import { eventually } from '../testing/line-client.ts';
import { client, runKeyedTeardown, startKeyed, teardown, tokenOf } from '../testing/keyed-test-kit.ts';

afterEach(runKeyedTeardown);

describe('keyed protocol server', () => {
  it('grants a free lock and releases it with its token', async () => {
    const { port, engine } = await startKeyed();
    const c = await client(port);
    c.send('A jobs/nightly 5 0');
    const token = tokenOf(await c.next());
    c.send(`R jobs/nightly ${token}`);
    expect(await c.next()).toBe('R jobs/nightly OK');
    expect(engine.lockCount).toBe(0);
  });

  it('answers pipelined requests, matching replies by op and key', async () => {
    const { port } = await startKeyed();
    const holder = await client(port);
    holder.send('A busy 5 0');
    const busyToken = tokenOf(await holder.next());
    const c = await client(port);
    // The first request waits on a held key; the others are answered before it.
    c.send('A busy 5 0', 'A k1 5 0', 'A k2 0.25 0', 'R k3 1');
    const first = await c.take(3);
    expect(first[0]).toMatch(/^A k1 \d+$/);
    expect(first[1]).toMatch(/^A k2 \d+$/);
    expect(first[2]).toBe('R k3 STALE');
    holder.send(`R busy ${busyToken}`);
    expect(await holder.next()).toBe('R busy OK');
    const granted = tokenOf(await c.next());
    expect(granted).toBeGreaterThan(busyToken);
  });

  it('keeps same-key replies in request order when a later waiter times out first', async () => {
    const { port } = await startKeyed();
    const holder = await client(port);
    holder.send('A k 5 0');
    const held = tokenOf(await holder.next());
    const c = await client(port);
    c.send('A k 5 2', 'A k 5 0.1');
    // The second request's wait ends first, but its T must not overtake the first request's answer.
    await new Promise((r) => setTimeout(r, 300));
    expect(c.lines).toEqual([]);
    holder.send(`R k ${held}`);
    const [grant, timeout] = await c.take(2);
    expect(tokenOf(grant as string)).toBeGreaterThan(held);
    expect(timeout).toBe('T k');
  });

  it('answers T when the wait runs out and leaves nothing queued', async () => {
    const { port, engine } = await startKeyed();
    const holder = await client(port);
    holder.send('A k 5 0');
    await holder.next();
    const c = await client(port);
    c.send('A k 5 0.05');
    expect(await c.next()).toBe('T k');
    expect(engine.waiterCount).toBe(0);
  });

  it('hands the lock to the next waiter with a larger token on release from another connection', async () => {
    const { port } = await startKeyed();
    const a = await client(port);
    const b = await client(port);
    const other = await client(port);
    a.send('A k 5 0');
    const ta = tokenOf(await a.next());
    b.send('A k 5 0');
    await eventually(() => b.lines.length === 0, 50);
    other.send(`R k ${ta}`);
    expect(await other.next()).toBe('R k OK');
    expect(tokenOf(await b.next())).toBeGreaterThan(ta);
    // A second release of the old token is stale and frees nothing.
    other.send(`R k ${ta}`);
    expect(await other.next()).toBe('R k STALE');
  });

  it('reclaims a grant when its lease ends and hands it over', async () => {
    const { port, engine } = await startKeyed();
    const a = await client(port);
    const b = await client(port);
    a.send('A k 0.2 0');
    const ta = tokenOf(await a.next());
    b.send('A k 5 0');
    const tb = tokenOf(await b.next(2_000));
    expect(tb).toBeGreaterThan(ta);
    a.send(`R k ${ta}`);
    expect(await a.next()).toBe('R k STALE');
    expect(engine.lock('k')?.holder?.token).toBe(tb);
  });

  it('removes the waiters of a connection that closes, and keeps its delivered grants', async () => {
    const { port, engine } = await startKeyed();
    const a = await client(port);
    a.send('A held 5 0');
    const held = tokenOf(await a.next());
    const b = await client(port);
    b.send('A held 5 0');
    await eventually(() => engine.waiterCount === 1);
    b.close();
    await eventually(() => engine.waiterCount === 0);
    a.close();
    await eventually(() => a.closed);
    // The grant outlives its connection: it ends by R or by its lease.
    const c = await client(port);
    c.send(`R held ${held}`);
    expect(await c.next()).toBe('R held OK');
  });

  it('keeps handed-over grants whose replies were queued in Node behind a write in flight, once read', async () => {
    const count = 20_000;
    const { port, engine, listener } = await startKeyed({ maxBacklog: count });
    const pad = 'x'.repeat(230);
    const key = (i: number) => `${pad}${i}`;
    const holder = await client(port);
    holder.send(...Array.from({ length: count }, (_, i) => `A ${key(i)} 30 0`));
    const tokens = (await holder.take(count)).map(tokenOf);
    // The waiter queues on every key, then does not read: the handovers' replies (about 5 MB)
    // fill the kernel's buffers, so most writes queue in Node behind the one in flight and are
    // confirmed only by the socket's write callback. A confirmation lost there would count those
    // grants as never delivered, and the close below would release them.
    const waiter = connect(port, '127.0.0.1');
    teardown.push(() => void waiter.destroy());
    await new Promise<void>((resolve) => waiter.once('connect', () => resolve()));
    waiter.pause();
    waiter.write(Array.from({ length: count }, (_, i) => `A ${key(i)} 30 0\n`).join(''));
    await eventually(() => engine.waiterCount === count, 10_000, 'the waiter to queue on every key');
    holder.send(...tokens.map((t, i) => `R ${key(i)} ${t}`));
    await eventually(() => engine.waiterCount === 0, 10_000, 'every handover');
    let newlines = 0;
    waiter.on('data', (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) newlines++;
    });
    waiter.resume();
    await eventually(() => newlines === count, 20_000, 'every grant read');
    await new Promise((r) => setTimeout(r, 50));
    waiter.destroy();
    await eventually(() => listener.connections.size === 1, 5_000, 'the server to see the close');
    expect(engine.heldCount).toBe(count);
  });

  it('releases a grant at once when the waiting connection died before it could be delivered', async () => {
    const { port, engine } = await startKeyed();
    const a = await client(port);
    a.send('A k 5 0');
    const ta = tokenOf(await a.next());
    // A real client process queues behind, then is killed (its socket is reset by the kernel).
    const child = spawn(
      process.execPath,
      [
        '-e',
        `
      const s = require('node:net').connect(${port}, '127.0.0.1', () => s.write('A k 5 0\\n'));
      setInterval(() => {}, 1000);
    `,
      ],
      { stdio: 'ignore' },
    );
    teardown.push(() => void child.kill('SIGKILL'));
    await eventually(() => engine.waiterCount === 1, 5_000, 'the child to queue');
    child.kill('SIGKILL');
    await eventually(() => engine.waiterCount === 0, 5_000, 'the killed waiter to leave');
    a.send(`R k ${ta}`);
    expect(await a.next()).toBe('R k OK');
    expect(engine.lockCount).toBe(0);
  });

  it('answers malformed requests with E and keeps the connection usable', async () => {
    const { port } = await startKeyed();
    const c = await client(port);
    c.send('A k -1 0', 'A k 5 x', 'X k', 'R k nope', `A ${'x'.repeat(251)} 5 0`, 'A k 5');
    const replies = await c.take(6);
    expect(replies[0]).toMatch(/^E A k bad-lease /);
    expect(replies[1]).toMatch(/^E A k bad-wait /);
    expect(replies[2]).toMatch(/^E X k unknown-op /);
    expect(replies[3]).toMatch(/^E R k bad-token /);
    expect(replies[4]).toMatch(/^E A x+ bad-key /);
    expect(replies[5]).toMatch(/^E A k bad-wait /);
    c.send('A k 5 0');
    expect(await c.next()).toMatch(/^A k \d+$/);
  });

  it('closes a connection whose line passes 4 KiB, after an E line, and keeps serving others', async () => {
    const { port } = await startKeyed();
    const c = await client(port);
    c.socket.write('A '.padEnd(5_000, 'x'));
    expect(await c.next()).toMatch(/^E - - line-too-long /);
    await c.waitClosed();
    const d = await client(port);
    d.send('A k 5 0');
    expect(await d.next()).toMatch(/^A k \d+$/);
  });

  it('refuses requests past the backlog with a clear error', async () => {
    const { port } = await startKeyed({ maxBacklog: 2 });
    const holder = await client(port);
    holder.send('A k 5 0');
    await holder.next();
    const c = await client(port);
    c.send('A k 5 0.3', 'A k 5 0.3', 'A k 5 0', 'A j 5 0');
    // At once on another key; on the waiting key only after the earlier requests are answered.
    expect(await c.next()).toMatch(/^E A j backlog-full /);
    expect(await c.take(3)).toEqual(['T k', 'T k', expect.stringMatching(/^E A k backlog-full /)]);
  });

  it('ends a half-sent line at the io-timeout', async () => {
    const { port } = await startKeyed({ ioTimeoutMs: 200 });
    const c = await client(port);
    c.socket.write('A k 5');
    expect(await c.next()).toMatch(/^E - - io-timeout /);
    await c.waitClosed();
  });

  it('refuses connections over the limit and keeps serving the others', async () => {
    const { port } = await startKeyed({ maxConnections: 1 });
    const a = await client(port);
    const b = await client(port);
    expect(await b.next()).toBe(KEYED_REFUSAL.trimEnd());
    await b.waitClosed();
    a.send('A k 5 0');
    expect(await a.next()).toMatch(/^A k \d+$/);
  });

  it('says goodbye to every connection at shutdown', async () => {
    const { port, listener } = await startKeyed();
    const a = await client(port);
    a.send('A k 5 0');
    await a.next();
    listener.closeAll();
    expect(await a.next()).toBe(KEYED_GOODBYE.trimEnd());
    await a.waitClosed();
  });

  it('destroys a connection whose peer never closes its side after our goodbye', async () => {
    const { port, listener } = await startKeyed({ ioTimeoutMs: 200 });
    const halfOpen = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    teardown.push(() => void halfOpen.destroy());
    let ended = false;
    halfOpen.resume();
    halfOpen.on('end', () => {
      ended = true; // and, being half-open, we never end our side
    });
    await new Promise((resolve) => halfOpen.once('connect', resolve));
    await eventually(() => listener.connections.size === 1);
    listener.closeAll();
    await eventually(() => ended, 3_000, 'the goodbye FIN');
    await eventually(() => listener.connections.size === 0, 3_000, 'the half-open peer to be destroyed');
  });

  it('cuts off a client that never reads its replies without stalling others', async () => {
    const { port, listener } = await startKeyed({ ioTimeoutMs: 300 });
    const stuck = await client(port);
    stuck.socket.pause();
    // Thousands of stale releases, each answered, with nobody reading the answers.
    const burst = 'R some/long/key/to/fill/the/buffers 1\n'.repeat(20_000);
    for (let i = 0; i < 20; i++) stuck.socket.write(burst);
    const other = await client(port);
    other.send('A k 5 0');
    expect(await other.next()).toMatch(/^A k \d+$/);
    await eventually(() => listener.connections.size === 1, 5_000, 'the stuck reader to be cut off');
  });
});
