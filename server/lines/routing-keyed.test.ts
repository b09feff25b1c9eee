// Listener routes (routing.ts) on the keyed protocol, on real sockets: a standby's `M`, the
// switch of a serving node to redirect after the engine reset, and holds.
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { KEYED_GOODBYE } from './keyed-connection.ts';
import { HOLD, SERVE, type Route } from './routing.ts';
import { eventually } from '../testing/line-client.ts';
import { client, runKeyedTeardown, startKeyed, tokenOf } from '../testing/keyed-test-kit.ts';

afterEach(runKeyedTeardown);

const STANDBY: Route = { kind: 'redirect', lock: '10.0.0.2:7070', session: '10.0.0.2:7071' };
const M = 'M 10.0.0.2:7070';

describe('keyed listener routes', () => {
  it('sends M on connect and answers every request line with M, without asking the engine', async () => {
    const { port, engine, listener } = await startKeyed();
    listener.setRoute(STANDBY);
    const c = await client(port);
    expect(await c.next()).toBe(M);
    c.send('A k 5 0', 'R k 1', 'bogus');
    expect(await c.take(3)).toEqual([M, M, M]);
    expect(engine.lockCount).toBe(0);
    expect(c.closed).toBe(false);
  });

  it('serves again when the route goes back to serve', async () => {
    const { port, listener } = await startKeyed();
    listener.setRoute(STANDBY);
    const c = await client(port);
    expect(await c.next()).toBe(M);
    listener.setRoute(SERVE);
    c.send('A k 5 0');
    tokenOf(await c.next());
  });

  it('on a switch to redirect after the engine reset, holders and waiters get only M, then close', async () => {
    const { port, engine, listener } = await startKeyed();
    const holder = await client(port);
    holder.send('A k 5 0');
    tokenOf(await holder.next());
    const waiter = await client(port);
    // `A k` waits; the bad lease after it is held back behind it; `A other` is granted.
    waiter.send('A k 5 0', 'A k -1 0', 'A other 5 0');
    expect(await waiter.next()).toMatch(/^A other \d+$/);
    expect(engine.waiterCount).toBe(1);
    engine.reset();
    listener.setRoute(STANDBY);
    // No `T k` for the ended waiter, no held-back `E A k bad-lease`: the client re-sends both there.
    expect(await holder.closedWith()).toEqual([M]);
    expect(await waiter.closedWith()).toEqual([M]);
  });

  it('sends M after the replies already queued for writing', async () => {
    const { port, engine, listener } = await startKeyed();
    const holder = await client(port);
    holder.send('A k 5 0');
    const token = tokenOf(await holder.next());
    const waiter = await client(port);
    waiter.send('A k 5 0');
    await eventually(() => engine.waiterCount === 1);
    // In one turn: the waiter's grant is queued, then the node steps down.
    expect(engine.release('k', token)).toBe('ok');
    engine.reset();
    listener.setRoute(STANDBY);
    const lines = await waiter.closedWith();
    expect(lines).toHaveLength(2);
    expect(tokenOf(lines[0] as string)).toBeGreaterThan(token);
    expect(lines[1]).toBe(M);
  });

  it('holds: requests sent meanwhile are answered in order on serve, and a held line does not time out', async () => {
    const { port, listener } = await startKeyed({ ioTimeoutMs: 200 });
    const c = await client(port);
    c.send('A k 5 0');
    const token = tokenOf(await c.next());
    // Half a line read before the hold: it must not time out while we are not reading.
    c.socket.write('A h 5');
    await eventually(() => [...listener.connections].some((conn) => conn.partialSince !== 0));
    listener.setRoute(HOLD);
    c.socket.write(' 0\n');
    c.send(`R k ${token}`, 'A a 5 0');
    c.socket.write('A b 5'); // half a line again, finished after the hold
    const late = await client(port); // accepted during the hold: held too
    late.send('A c 5 0');
    await delay(500);
    expect([c.lines, late.lines, c.closed, late.closed]).toEqual([[], [], false, false]);
    listener.setRoute(SERVE);
    // In order; the grant made before the hold survived it: its release is OK.
    const [h, released, a] = await c.take(3);
    expect(h).toMatch(/^A h \d+$/);
    expect(released).toBe('R k OK');
    expect(a).toMatch(/^A a \d+$/);
    // The unfinished line's io-timeout starts again from the end of the hold.
    await delay(100);
    c.socket.write(' 0\n');
    expect(await c.next()).toMatch(/^A b \d+$/);
    expect(await late.next()).toMatch(/^A c \d+$/);
  });

  it('gives a line half-read when the hold began a fresh io-timeout when the hold ends', async () => {
    const { port, listener } = await startKeyed({ ioTimeoutMs: 200 });
    const c = await client(port);
    c.socket.write('A h 5');
    await eventually(() => [...listener.connections].some((conn) => conn.partialSince !== 0));
    listener.setRoute(HOLD);
    await delay(400);
    listener.setRoute(SERVE);
    await delay(100);
    c.socket.write(' 0\n');
    expect(await c.next()).toMatch(/^A h \d+$/);
  });

  it('ends a hold past holdMaxMs with the going-away goodbye, waiters answered T first', async () => {
    const { port, engine, listener } = await startKeyed({ holdMaxMs: 150, ioTimeoutMs: 1_000 });
    const holder = await client(port);
    holder.send('A k 5 0');
    tokenOf(await holder.next());
    const waiter = await client(port);
    waiter.send('A k 5 0');
    await eventually(() => engine.waiterCount === 1);
    const heldAt = performance.now();
    listener.setRoute(HOLD);
    expect(await waiter.closedWith()).toEqual(['T k', KEYED_GOODBYE.trimEnd()]);
    expect(performance.now() - heldAt).toBeGreaterThanOrEqual(140);
    expect(await holder.closedWith()).toEqual([KEYED_GOODBYE.trimEnd()]);
    // As at shutdown, the delivered grant outlives its connection.
    expect(engine.lock('k')?.holder).not.toBeNull();
  });

  it('a hold that ends in a redirect sends only M, and the requests left unread never reach the engine', async () => {
    const { port, engine, listener } = await startKeyed();
    const holder = await client(port);
    holder.send('A k 5 0');
    tokenOf(await holder.next());
    listener.setRoute(HOLD);
    holder.send('A x 5 0');
    const late = await client(port);
    late.send('A y 5 0');
    await delay(100);
    expect(late.lines).toEqual([]);
    engine.reset();
    listener.setRoute(STANDBY);
    expect(await holder.closedWith()).toEqual([M]);
    expect(await late.closedWith()).toEqual([M]);
    expect(engine.lockCount).toBe(0);
  });
});
