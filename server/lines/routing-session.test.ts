// Listener routes (routing.ts) on the session protocol, on real sockets: a standby's
// REDIRECT, the switch of a serving node to redirect after the engine reset, and holds.
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_GOODBYE, SESSION_REFUSAL, SessionConnection } from './session-connection.ts';
import { HOLD, SERVE, type Route } from './routing.ts';
import { LineClient } from '../testing/line-client.ts';
import { startProtocolStack, type ProtocolStackOptions } from '../testing/protocol-stack.ts';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

const STANDBY: Route = { kind: 'redirect', lock: '10.0.0.2:7070', session: '10.0.0.2:7071' };
const REDIRECT = 'REDIRECT 10.0.0.2:7071';

async function startSessions(opts: ProtocolStackOptions = {}) {
  const stack = await startProtocolStack((transport, ctx, engine) => new SessionConnection(transport, ctx, engine), SESSION_REFUSAL, opts);
  teardown.push(stack.stop);
  const open = async (): Promise<LineClient> => {
    const c = await LineClient.open(stack.port);
    teardown.push(() => c.close());
    return c;
  };
  /** A session that sent ACQUIRE and got `expected` (a regex) back. */
  const acquire = async (name: string, expected: RegExp): Promise<LineClient> => {
    const c = await open();
    c.send(`ACQUIRE ${name} 30000`);
    expect(await c.next()).toMatch(expected);
    return c;
  };
  return { ...stack, open, acquire };
}

describe('session listener routes', () => {
  it('answers the first line with REDIRECT and closes, and says nothing before that line', async () => {
    const { engine, listener, open } = await startSessions();
    listener.setRoute(STANDBY);
    const c = await open();
    await delay(100);
    expect([c.lines, c.closed]).toEqual([[], false]);
    c.send('ACQUIRE k 1000');
    expect(await c.closedWith()).toEqual([REDIRECT]);
    expect(engine.lockCount).toBe(0);
  });

  it('on a switch to redirect after the engine reset, holders and waiters get only REDIRECT, then close', async () => {
    const { engine, listener, open, acquire } = await startSessions();
    const holder = await acquire('k', /^ACQUIRED \d+$/);
    const waiter = await acquire('k', /^WAITING 1$/);
    const quiet = await open(); // connected, first line not sent yet
    engine.reset();
    listener.setRoute(STANDBY);
    expect(await holder.closedWith()).toEqual([REDIRECT]);
    expect(await waiter.closedWith()).toEqual([REDIRECT]);
    // Closing before its first line could reset the connection under the REDIRECT: it waits.
    await delay(50);
    expect(quiet.closed).toBe(false);
    quiet.send('ACQUIRE k 1000');
    expect(await quiet.closedWith()).toEqual([REDIRECT]);
  });

  it('holds: the holder keeps its claim, and lines sent meanwhile are answered on serve without timing out', async () => {
    const { listener, open, acquire } = await startSessions({ ioTimeoutMs: 200 });
    const holder = await acquire('k', /^ACQUIRED \d+$/);
    listener.setRoute(HOLD);
    holder.send('HEARTBEAT');
    const late = await open();
    late.send('ACQUIRE k 30000');
    const silent = await open(); // its first line is due within the io-timeout of reading, not of connecting
    await delay(500);
    expect([holder.lines, late.lines, holder.closed, late.closed, silent.closed]).toEqual([[], [], false, false, false]);
    listener.setRoute(SERVE);
    expect(await holder.next()).toMatch(/^ACQUIRED \d+$/);
    expect(await late.next()).toBe('WAITING 1');
    silent.send('ACQUIRE other 30000');
    expect(await silent.next()).toMatch(/^ACQUIRED \d+$/);
  });

  it('ends a hold past holdMaxMs with ERROR 0x01', async () => {
    const { listener, open, acquire } = await startSessions({ holdMaxMs: 150, ioTimeoutMs: 1_000 });
    const holder = await acquire('k', /^ACQUIRED \d+$/);
    listener.setRoute(HOLD);
    const late = await open();
    late.send('ACQUIRE k 30000');
    expect(await holder.closedWith()).toEqual([SESSION_GOODBYE.trimEnd()]);
    expect(await late.closedWith()).toEqual([SESSION_GOODBYE.trimEnd()]);
  });

  it('a hold that ends in a redirect sends only REDIRECT, to the holder and to a session that asked meanwhile', async () => {
    const { engine, listener, open, acquire } = await startSessions();
    const holder = await acquire('k', /^ACQUIRED \d+$/);
    listener.setRoute(HOLD);
    holder.send('HEARTBEAT');
    const late = await open();
    late.send('ACQUIRE k 30000');
    await delay(100);
    engine.reset();
    listener.setRoute(STANDBY);
    expect(await holder.closedWith()).toEqual([REDIRECT]);
    expect(await late.closedWith()).toEqual([REDIRECT]);
    expect(engine.lockCount).toBe(0);
  });
});
