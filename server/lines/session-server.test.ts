// The session protocol end to end: real sockets on 127.0.0.1, the engine on the real clock,
// built the way the daemon builds it.
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_GOODBYE, SESSION_REFUSAL, SessionConnection } from './session-connection.ts';
import { eventually, LineClient } from '../testing/line-client.ts';
import { startProtocolStack, type ProtocolStackOptions } from '../testing/protocol-stack.ts';

const HOST = '127.0.0.1';
const WAIT_MS = 5_000;
const GOODBYE = SESSION_GOODBYE.trimEnd();

const teardown: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of teardown.splice(0).reverse()) await fn();
});

/** A client closed after the test; it keeps any "\r", so each reply is pinned to end in a bare "\n". */
async function open(port: number): Promise<LineClient> {
  const client = await LineClient.open(port, HOST, { timeoutMs: WAIT_MS, keepCr: true });
  teardown.push(() => client.close());
  return client;
}

async function startServer(opts: ProtocolStackOptions = {}) {
  const stack = await startProtocolStack((transport, ctx, engine) => new SessionConnection(transport, ctx, engine), SESSION_REFUSAL, opts);
  teardown.push(stack.stop);
  /** Connects and sends ACQUIRE; resolves with the client and the server's answer. */
  const acquire = async (name: string, leaseMs = 30_000): Promise<[LineClient, string]> => {
    const client = await open(stack.port);
    client.send(`ACQUIRE ${name} ${leaseMs}`);
    return [client, await client.next()];
  };
  return { ...stack, acquire };
}

function tokenOf(line: string): bigint {
  expect(line).toMatch(/^ACQUIRED [0-9]+$/);
  return BigInt(line.slice('ACQUIRED '.length));
}

describe('session server: acquiring and queueing', () => {
  it('answers ACQUIRE on a free lock with ACQUIRED and a token', async () => {
    const { acquire, engine } = await startServer();
    const [, reply] = await acquire('jobs/nightly');
    expect(tokenOf(reply)).toBeGreaterThan(0n);
    expect(engine.heldCount).toBe(1);
  });

  it('queues later sessions in arrival order: WAITING 1, then WAITING 2', async () => {
    const { acquire } = await startServer();
    await acquire('k');
    expect((await acquire('k'))[1]).toBe('WAITING 1');
    expect((await acquire('k'))[1]).toBe('WAITING 2');
  });

  it('accepts CRLF line endings and several lines in one packet', async () => {
    const { port } = await startServer();
    const client = await open(port);
    client.socket.write('ACQUIRE k 30000\r\nHEARTBEAT\r\n');
    const token = tokenOf(await client.next());
    expect(await client.next()).toBe(`ACQUIRED ${token}`);
  });

  it('answers each HEARTBEAT with ACQUIRED for the holder and the current position for a waiter', async () => {
    const { acquire } = await startServer();
    const [holder, granted] = await acquire('k');
    const [first] = await acquire('k');
    const [second] = await acquire('k');
    holder.send('HEARTBEAT');
    expect(await holder.next()).toBe(granted);
    second.send('HEARTBEAT');
    expect(await second.next()).toBe('WAITING 2');
    first.socket.end();
    await first.closedWith();
    second.send('HEARTBEAT');
    expect(await second.next()).toBe('WAITING 1');
  });

  it('pushes ACQUIRED with a larger token to the next waiter as soon as the holder closes', async () => {
    const { acquire } = await startServer();
    const [holder, granted] = await acquire('k');
    const [waiter] = await acquire('k');
    const [behind] = await acquire('k');
    holder.socket.end();
    expect(tokenOf(await waiter.next())).toBeGreaterThan(tokenOf(granted));
    behind.send('HEARTBEAT');
    expect(await behind.next()).toBe('WAITING 1');
  });

  it('grants the waiter at once when the holding client process is killed', async () => {
    const { acquire, port } = await startServer();
    const script = `
      const s = require('node:net').connect(${port}, '${HOST}', () => s.write('ACQUIRE k 60000\\n'));
      s.on('data', (d) => { if (String(d).startsWith('ACQUIRED ')) process.stdout.write('held\\n'); });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    teardown.push(() => void child.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      child.once('exit', () => reject(new Error('child exited before holding the lock')));
    });
    const [waiter, queued] = await acquire('k', 60_000);
    expect(queued).toBe('WAITING 1');
    child.kill('SIGKILL');
    // Well within the 60 s lease: the closed connection released the lock, not an expiry.
    tokenOf(await waiter.next());
  });
});

describe('session server: leases', () => {
  it('ends a silent holder with ERROR 0x03 after one lease and grants the waiter', async () => {
    const { acquire } = await startServer();
    const [holder] = await acquire('k', 300);
    const [waiter] = await acquire('k', 30_000);
    expect(await holder.closedWith()).toEqual(['ERROR 0x03 lease expired']);
    tokenOf(await waiter.next());
  });

  it('ends a silent waiter with ERROR 0x03 after one lease, leaving the holder alone', async () => {
    const { acquire, engine } = await startServer();
    const [holder, granted] = await acquire('k', 30_000);
    const [waiter] = await acquire('k', 300);
    expect(await waiter.closedWith()).toEqual(['ERROR 0x03 lease expired']);
    expect(engine.waiterCount).toBe(0);
    holder.send('HEARTBEAT');
    expect(await holder.next()).toBe(granted);
  });

  it('keeps the lock for a heartbeating holder over many leases', async () => {
    const leaseMs = 400;
    const { acquire } = await startServer();
    const [holder, granted] = await acquire('k', leaseMs);
    const [waiter] = await acquire('k', 30_000);
    const start = performance.now();
    while (performance.now() - start < 5 * leaseMs) {
      await delay(50);
      holder.send('HEARTBEAT');
      expect(await holder.next()).toBe(granted);
    }
    waiter.send('HEARTBEAT');
    expect(await waiter.next()).toBe('WAITING 1');
  });
});

describe('session server: protocol errors', () => {
  it('ends a session whose first line is not a valid ACQUIRE with ERROR 0x02, and serves others', async () => {
    const { acquire, port } = await startServer();
    const cases: Array<[string, string]> = [
      ['HEARTBEAT', 'expected ACQUIRE <name> <lease_ms>'],
      ['HELLO there', 'expected ACQUIRE <name> <lease_ms>'],
      ['ACQUIRE k', 'expected ACQUIRE <name> <lease_ms>'],
      ['ACQUIRE k 0', 'bad lease_ms: an integer number of milliseconds > 0, at most 15 digits'],
      ['ACQUIRE a\tb 100', 'bad name: 1 to 250 bytes of UTF-8 without whitespace or control characters'],
    ];
    for (const [line, detail] of cases) {
      const client = await open(port);
      client.send(line);
      expect(await client.closedWith()).toEqual([`ERROR 0x02 protocol error: ${detail}`]);
    }
    tokenOf((await acquire('k'))[1]);
  });

  it('treats a second ACQUIRE as a protocol error and releases the claim', async () => {
    const { acquire } = await startServer();
    const [holder] = await acquire('k');
    const [waiter] = await acquire('k');
    holder.send('ACQUIRE other 1000');
    expect(await holder.closedWith()).toEqual(['ERROR 0x02 protocol error: ACQUIRE already sent: one connection is one claim']);
    tokenOf(await waiter.next());
  });

  it('treats an unknown line after ACQUIRE as a protocol error', async () => {
    const { acquire } = await startServer();
    await acquire('k');
    const [waiter] = await acquire('k');
    waiter.send('RELEASE');
    expect(await waiter.closedWith()).toEqual(['ERROR 0x02 protocol error: expected HEARTBEAT']);
  });

  it('ends a session that sends a line over 4 KiB with ERROR 0x02', async () => {
    const { acquire, engine } = await startServer();
    const [holder] = await acquire('k');
    holder.socket.write(`HEARTBEAT ${'x'.repeat(5000)}`);
    expect(await holder.closedWith()).toEqual(['ERROR 0x02 protocol error: line too long: over 4096 bytes']);
    await eventually(() => engine.lockCount === 0, WAIT_MS, 'the lock to be released');
  });
});

describe('session server: io-timeout', () => {
  it('closes a connection that sends no ACQUIRE within the io-timeout', async () => {
    const { port } = await startServer({ ioTimeoutMs: 300 });
    const client = await open(port);
    expect(await client.closedWith()).toEqual(['ERROR 0x02 io timeout: no ACQUIRE in time']);
  });

  it('closes a holder whose line is not finished within the io-timeout and grants the waiter', async () => {
    const { acquire } = await startServer({ ioTimeoutMs: 300 });
    const [holder] = await acquire('k');
    const [waiter] = await acquire('k');
    holder.socket.write('HEART');
    expect(await holder.closedWith()).toEqual(['ERROR 0x02 io timeout: line not finished in time']);
    tokenOf(await waiter.next());
  });

  it('cuts off a client that never reads its replies, without holding up anyone else', async () => {
    const { acquire, listener } = await startServer({ ioTimeoutMs: 300 });
    const [stuck] = await acquire('k', 60_000);
    const [waiter] = await acquire('k', 60_000);
    const [other, otherGrant] = await acquire('other', 60_000);
    // Stop reading, then pipeline heartbeats until the server stops taking them.
    stuck.socket.pause();
    const chunk = Buffer.from('HEARTBEAT\n'.repeat(6_500));
    const flood = (): void => {
      while (!stuck.socket.destroyed && stuck.socket.write(chunk));
    };
    stuck.socket.on('drain', flood);
    flood();
    other.send('HEARTBEAT');
    expect(await other.next()).toBe(otherGrant);
    tokenOf(await waiter.next(10_000));
    await eventually(() => listener.connections.size === 2, WAIT_MS, 'the stuck connection to be dropped');
  });
});

describe('session server: limits, shutdown and admin actions', () => {
  it('refuses a connection over the limit with ERROR 0x06', async () => {
    const { acquire, listener, port } = await startServer({ maxConnections: 2 });
    const [first] = await acquire('a');
    await acquire('b');
    const refused = await open(port);
    expect(await refused.closedWith()).toEqual(['ERROR 0x06 too many connections']);
    first.socket.end();
    await eventually(() => listener.connections.size === 1, WAIT_MS, 'a connection slot to free up');
    tokenOf((await acquire('c'))[1]);
  });

  it('says ERROR 0x01 to every session at graceful shutdown', async () => {
    const { acquire, listener } = await startServer();
    const sessions = [(await acquire('k'))[0], (await acquire('k'))[0], (await acquire('k'))[0], (await acquire('x'))[0]];
    listener.closeAll();
    for (const session of sessions) expect((await session.closedWith()).at(-1)).toBe(GOODBYE);
  });

  it('ends the holder with ERROR 0x04 when an admin force-releases the lock, and grants the waiter', async () => {
    const { acquire, engine } = await startServer();
    const [holder] = await acquire('k');
    const [waiter] = await acquire('k');
    expect(engine.forceRelease('k').ok).toBe(true);
    expect(await holder.closedWith()).toEqual(['ERROR 0x04 force-released by an admin']);
    tokenOf(await waiter.next());
  });

  it('ends a waiter with ERROR 0x05 when an admin kicks it from the queue', async () => {
    const { acquire, engine } = await startServer();
    const [holder, granted] = await acquire('k');
    const [waiter] = await acquire('k');
    const [behind] = await acquire('k');
    expect(engine.kick('k', engine.lock('k')?.queue()[0]?.id ?? -1)).toBe(true);
    expect(await waiter.closedWith()).toEqual(['ERROR 0x05 removed from the queue by an admin']);
    behind.send('HEARTBEAT');
    expect(await behind.next()).toBe('WAITING 1');
    holder.send('HEARTBEAT');
    expect(await holder.next()).toBe(granted);
  });

  it('never leaves a HEARTBEAT unanswered: a claim that ended without a word ends the session with ERROR 0x01', async () => {
    const { acquire, engine } = await startServer();
    const [holder] = await acquire('k');
    const [waiter] = await acquire('k');
    // The engine forgets every claim silently (as before a switch to standby) and no redirect follows.
    engine.reset();
    holder.send('HEARTBEAT');
    expect(await holder.closedWith()).toEqual(['ERROR 0x01 server going away: the claim ended on the server']);
    waiter.send('HEARTBEAT');
    expect(await waiter.closedWith()).toEqual(['ERROR 0x01 server going away: the claim ended on the server']);
  });

  it('leaves no lock, holder or waiter in the engine once every client has closed', async () => {
    const { acquire, engine, listener } = await startServer();
    const sessions: LineClient[] = [];
    for (const name of ['a', 'a', 'a', 'b', 'b', 'c']) sessions.push((await acquire(name))[0]);
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([3, 3, 3]);
    for (const session of sessions) session.socket.end();
    await eventually(() => listener.connections.size === 0, WAIT_MS, 'every connection to close');
    expect([engine.lockCount, engine.heldCount, engine.waiterCount]).toEqual([0, 0, 0]);
  });
});
