// The resumable-session extension on one node, end to end on 127.0.0.1: ACQUIRE with a claim
// key answers as ACQUIRE without one, closing still releases at once, and RESUME takes up no
// claim that is still on a connection (a single node never has claims between connections).
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_REFUSAL, SessionConnection, claimKeyHash } from './session-connection.ts';
import { eventually, LineClient } from '../testing/line-client.ts';
import { startProtocolStack } from '../testing/protocol-stack.ts';

const KEY = '00112233445566778899aabbccddeeff';
const UNKNOWN = 'ERROR 0x09 claim unknown: no claim with that key is waiting to be resumed here';

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

async function setup() {
  const stack = await startProtocolStack((transport, ctx, engine) => new SessionConnection(transport, ctx, engine), SESSION_REFUSAL);
  teardown.push(stack.stop);
  const open = async () => {
    const client = await LineClient.open(stack.port, '127.0.0.1', { timeoutMs: 3_000 });
    teardown.push(() => client.close());
    return client;
  };
  return { ...stack, open };
}

describe('resumable sessions on one node', () => {
  it('ACQUIRE with a claim key gets the same replies as without, and heartbeats as usual', async () => {
    const { open } = await setup();
    const holder = await open();
    holder.send(`ACQUIRE r/a 5000 ${KEY}`);
    const acquired = await holder.next();
    expect(acquired).toMatch(/^ACQUIRED \d+$/);
    const waiter = await open();
    waiter.send(`ACQUIRE r/a 5000 ${'f'.repeat(64)}`);
    expect(await waiter.next()).toBe('WAITING 1');
    holder.send('HEARTBEAT');
    expect(await holder.next()).toBe(acquired);
  });

  it('keeps only the SHA-256 of the key, and closing the connection still releases at once', async () => {
    const { open, engine } = await setup();
    const holder = await open();
    holder.send(`ACQUIRE r/b 5000 ${KEY.toUpperCase()}`);
    await holder.next();
    const claim = engine.lock('r/b')?.holder;
    expect(claim?.keyHash).toBe(claimKeyHash(KEY));
    expect(JSON.stringify(claim?.keyHash)).not.toContain(KEY);
    const waiter = await open();
    waiter.send('ACQUIRE r/b 5000');
    expect(await waiter.next()).toBe('WAITING 1');
    await holder.close();
    expect(await waiter.next()).toMatch(/^ACQUIRED \d+$/);
    expect(engine.resumableCount).toBe(0);
  });

  it('answers RESUME of a claim still on its connection, of a wrong key and of no claim alike, and ends nothing', async () => {
    const { open, engine } = await setup();
    const holder = await open();
    holder.send(`ACQUIRE r/c 5000 ${KEY}`);
    const acquired = await holder.next();
    for (const key of [KEY, 'ab'.repeat(16)]) {
      const thief = await open();
      thief.send(`RESUME r/c ${key}`);
      expect(await thief.closedWith()).toEqual([UNKNOWN]);
    }
    const nobody = await open();
    nobody.send(`RESUME r/none ${KEY}`);
    expect(await nobody.closedWith()).toEqual([UNKNOWN]);
    holder.send('HEARTBEAT');
    expect(await holder.next()).toBe(acquired);
    await eventually(() => engine.heldCount === 1);
  });

  it('keeps a claim whose connection was reset (not closed by the client) for RESUME, within its lease, and the waiter behind it waits', async () => {
    const { open, engine, port } = await setup();
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`ACQUIRE r/e 2000 ${KEY}\n`);
    const line = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString().trimEnd())));
    const waiter = await open();
    waiter.send('ACQUIRE r/e 5000');
    expect(await waiter.next()).toBe('WAITING 1');
    socket.resetAndDestroy();
    await eventually(() => engine.lock('r/e')?.holder?.owner.awaitingResume === true);
    const back = await open();
    back.send(`RESUME r/e ${KEY}`);
    expect(await back.next()).toBe(line);
    // Taken up: its connection owns it again, and closing that one releases at once.
    await back.close();
    expect(await waiter.next()).toMatch(/^ACQUIRED \d+$/);
  });

  it('a reset claim nobody resumes ends at its lease and the lock goes on', async () => {
    const { open, engine, port } = await setup();
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`ACQUIRE r/f 300 ${KEY}\n`);
    await new Promise((resolve) => socket.once('data', resolve));
    const waiter = await open();
    waiter.send('ACQUIRE r/f 5000');
    expect(await waiter.next()).toBe('WAITING 1');
    socket.resetAndDestroy();
    const at = performance.now();
    expect(await waiter.next()).toMatch(/^ACQUIRED \d+$/);
    expect(performance.now() - at).toBeGreaterThan(150);
    expect(engine.resumableCount).toBe(0);
  });

  it('refuses a RESUME after an ACQUIRE on the same connection, and a malformed RESUME, as protocol errors', async () => {
    const { open } = await setup();
    const a = await open();
    a.send(`ACQUIRE r/d 5000 ${KEY}`, `RESUME r/d ${KEY}`);
    expect((await a.closedWith()).at(-1)).toBe('ERROR 0x02 protocol error: ACQUIRE already sent: one connection is one claim');
    const b = await open();
    b.send('RESUME r/d 1234');
    expect(await b.closedWith()).toEqual(['ERROR 0x02 protocol error: expected RESUME <name> <claim_key>, the key 32 to 64 hex characters']);
  });
});
