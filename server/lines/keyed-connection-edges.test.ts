// The keyed server at the edges of a connection's life: half-closes, resets racing a
// handover, and clients that never read what they asked for.
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../testing/line-client.ts';
import { client, runKeyedTeardown, startKeyed, tokenOf } from '../testing/keyed-test-kit.ts';

afterEach(runKeyedTeardown);

describe('keyed protocol server and half-closing clients', () => {
  it('still answers requests that arrive together with the client FIN, then releases its waiters', async () => {
    const { port, engine } = await startKeyed();
    const holder = await client(port);
    holder.send('A busy 5 0');
    await holder.next();
    const c = await client(port);
    // Like `printf 'A k 5 0\n' | nc -N host port`: the requests and the FIN arrive at once.
    c.socket.end('A free 5 0\nA busy 5 0\n');
    expect(await c.next()).toMatch(/^A free \d+$/);
    await c.waitClosed();
    expect(engine.waiterCount).toBe(0);
    expect(engine.lock('free')?.holder).not.toBeNull();
  });
});

describe('keyed protocol server and reset connections', () => {
  it('releases at once a grant handed over to a connection the peer has just reset', async () => {
    const { port, engine } = await startKeyed();
    let leaked = 0;
    for (let i = 0; i < 10; i++) {
      const key = `race/${i}`;
      const holder = await client(port);
      const doomed = await client(port);
      const later = await client(port);
      holder.send(`A ${key} 30 0`);
      const token = tokenOf(await holder.next());
      doomed.send(`A ${key} 30 0`);
      await eventually(() => engine.lock(key)?.waiting === 1, 3_000, 'the doomed waiter to queue');
      // The reset reaches the server in the same turn as the release that hands the lock to it.
      doomed.socket.resetAndDestroy();
      holder.send(`R ${key} ${token}`);
      expect(await holder.next()).toBe(`R ${key} OK`);
      later.send(`A ${key} 30 1`);
      if ((await later.next()) === `T ${key}`) leaked++;
    }
    expect(leaked).toBe(0);
  });
});

describe('keyed protocol server and clients that do not read', () => {
  it('closes a connection whose replies held back behind a waiting request pass the backlog', async () => {
    const { port } = await startKeyed({ maxBacklog: 3 });
    const holder = await client(port);
    holder.send('A k 600 0');
    await holder.next();
    const c = await client(port);
    c.send('A k 600 0', ...Array.from({ length: 10 }, () => 'A k x 0'));
    expect(await c.next()).toMatch(/^E - - backlog-full /);
    await c.waitClosed();
  });

  it('keeps a grant whose reply was handed to the kernel, even when it shares a burst with megabytes the client never read', async () => {
    const { port, engine, listener } = await startKeyed({ maxBacklog: 400_000 });
    const holder = await client(port);
    holder.send('A g 600 0');
    const held = tokenOf(await holder.next());
    const c = await client(port);
    c.socket.pause(); // never reads: the server's output piles up in the kernel, then in Node
    // One waiting request, then 300,000 malformed ones whose answers are held behind it.
    c.socket.write(`A g 600 0\n${'A g x 0\n'.repeat(300_000)}`);
    await eventually(() => engine.lock('g')?.waiting === 1, 10_000, 'the waiter to queue');
    await new Promise((r) => setTimeout(r, 300)); // let the server read the whole burst
    holder.send(`R g ${held}`);
    expect(await holder.next()).toBe('R g OK');
    const granted = engine.lock('g')?.holder?.token;
    expect(granted).toBeGreaterThan(held);
    await new Promise((r) => setTimeout(r, 200)); // the first pieces reach the kernel
    c.socket.resetAndDestroy();
    await eventually(() => listener.connections.size === 1, 5_000, 'the reset connection to go');
    // The grant line was at the head of the output, handed to the kernel: it counts as delivered,
    // and the grant outlives the connection (it ends by R or its lease), never handed on twice.
    expect(engine.lock('g')?.holder?.token).toBe(granted);
  });
});
