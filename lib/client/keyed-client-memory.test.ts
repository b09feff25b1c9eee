// KeyedClient over the in-memory connector, on a fake clock: its redirect, pipelining and
// reconnect rules to the millisecond, with no socket and no real waiting. The same behaviours over
// real TCP are in keyed-client.test.ts and keyed-client-deadlines.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyedClient } from './keyed-client.ts';
import type { KeyedClientOptions } from './keyed-client.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { MemoryConnector } from './testing/memory-connector.ts';
import type { MemoryScript } from './testing/memory-connector.ts';

const STANDBY = '10.0.0.1:7070';
const ACTIVE = '10.0.0.2:7070';

let net: MemoryConnector;
let clients: KeyedClient[];

beforeEach(() => {
  // performance.now() too: the client measures waits and deadlines with it.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance', 'Date'] });
  net = new MemoryConnector();
  clients = [];
});

afterEach(async () => {
  const closing = Promise.all(clients.map((c) => c.close()));
  await vi.runAllTimersAsync();
  await closing;
  vi.useRealTimers();
});

function client(options: KeyedClientOptions): KeyedClient {
  const keyed = new KeyedClient({ clientName: null, ...options }, net);
  clients.push(keyed);
  return keyed;
}

/** Lets every queued microtask (opens, lines, closes) run, without moving the clock. */
const settle = async (): Promise<void> => {
  await vi.advanceTimersByTimeAsync(0);
};

/** Grants every `A <key> ...` with `token`. */
const granting = (token: string): MemoryScript => ({
  onLine: (connection, line) => {
    if (line.startsWith('A ')) connection.send(`A ${line.split(' ')[1]} ${token}`);
  },
});

describe('KeyedClient in memory', () => {
  it('follows an M redirect and sends its unanswered requests again, in order, after its identity', async () => {
    net.listen(STANDBY, { onLine: (connection, line) => line.startsWith('A ') && connection.send(`M ${ACTIVE}`) });
    const active = net.listen(ACTIVE, granting('7'));
    const keyed = client({ addresses: [STANDBY], clientName: 'worker-1' });
    const grants = Promise.all([keyed.acquire('a', { lease: 1000 }), keyed.acquire('b', { lease: 250, wait: 2000 })]);
    await settle();
    expect((await grants).map((grant) => [grant.key, grant.token])).toEqual([
      ['a', 7n],
      ['b', 7n],
    ]);
    expect(active.lines).toEqual(['I worker-1', 'A a 1 0', 'A b 0.25 2']);
    expect(active.connections).toHaveLength(1);
  });

  it('sends requests made in one turn on one connection and matches replies that come back out of order', async () => {
    const server = net.listen(STANDBY, {
      onLine: (connection) => {
        if (connection.lines.length === 3) connection.send('A c 3', 'A a 1', 'A b 2');
      },
    });
    const keyed = client({ addresses: [STANDBY] });
    const grants = Promise.all(['a', 'b', 'c'].map((key) => keyed.acquire(key, { lease: 1000 })));
    await settle();
    expect((await grants).map((grant) => grant.token)).toEqual([1n, 2n, 3n]);
    // One address still makes two connections; only the first open one carries requests.
    expect(server.connections.map((connection) => connection.lines.length)).toEqual([3, 0]);
  });

  it('a connection refused before it served anything tries again after the reconnect interval, not before', async () => {
    const keyed = client({ addresses: [STANDBY], reconnectInterval: 3000 });
    await expect(keyed.acquire('a', { lease: 1000 })).rejects.toThrow(/ECONNREFUSED/);
    expect(net.dials).toEqual([STANDBY, STANDBY]);
    net.listen(STANDBY, granting('5'));
    await vi.advanceTimersByTimeAsync(2999);
    expect(net.dials).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(net.dials).toHaveLength(4);
    expect((await keyed.acquire('a', { lease: 1000 })).token).toBe(5n);
  });

  it('a connection that was serving comes home at once when its node resets it, and its acquire moves to the other', async () => {
    const server = net.listen(STANDBY, {
      onLine: (connection, line) => {
        if (line === 'A a 1 0') connection.send('A a 1');
        if (line === 'A b 1 0' && connection === server.connections[0]) connection.reset();
        if (line === 'A b 1 0' && connection !== server.connections[0]) connection.send('A b 2');
      },
    });
    const keyed = client({ addresses: [STANDBY], reconnectInterval: 3000 });
    expect((await keyed.acquire('a', { lease: 1000 })).token).toBe(1n);
    const b = keyed.acquire('b', { lease: 1000 });
    await settle();
    expect((await b).token).toBe(2n);
    // Two first connects, then the served one at once: no timer was needed.
    expect(net.dials).toEqual([STANDBY, STANDBY, STANDBY]);
  });

  it('when the node a redirect names cannot be reached, the connection asks at home again after 200 ms, not the interval', async () => {
    const standby = net.listen(STANDBY, { onLine: (connection) => connection.send(`M ${ACTIVE}`) });
    const keyed = client({ addresses: [STANDBY, STANDBY], reconnectInterval: 3000 });
    const acquire = keyed.acquire('a', { lease: 1000, wait: 10_000 });
    acquire.catch(() => undefined);
    await settle();
    const connectsHome = standby.connections.length;
    await vi.advanceTimersByTimeAsync(199);
    expect(standby.connections).toHaveLength(connectsHome);
    await vi.advanceTimersByTimeAsync(1);
    expect(standby.connections.length).toBeGreaterThan(connectsHome);
  });

  it('rejects a finite-wait acquire the server never answers at wait + 1 s + 10 %, not before', async () => {
    const silent = net.listen(STANDBY);
    const keyed = client({ addresses: [STANDBY] });
    let outcome: unknown;
    keyed.acquire('a', { lease: 1000, wait: 300 }).catch((error: unknown) => {
      outcome = error;
    });
    await vi.advanceTimersByTimeAsync(300 + 1000 + 30 - 1);
    expect(outcome).toBeUndefined();
    // At the deadline the client first reads the replies already received (a setImmediate),
    // which the fake clock runs on its next step.
    await vi.advanceTimersByTimeAsync(2);
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    // Dropping the connection is what makes the server forget the request.
    expect(silent.connections[0]?.closed).toBe(true);
  });
});
