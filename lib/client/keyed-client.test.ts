import { describe, it, expect, vi } from 'vitest';
import net from 'node:net';
import { BatonError } from '../errors.ts';
import { KeyedClient } from './keyed-client.ts';
import type { KeyedClientOptions } from './keyed-client.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import type { FakeConnection, LineScript } from './testing/fake-line-server.ts';

// ---- Scripted keyed-protocol servers on 127.0.0.1, port 0 ----

const fakes = fakeLineServers<KeyedClient>();
const fakeServer = fakes.start;

function client(options: KeyedClientOptions): KeyedClient {
  return fakes.track(new KeyedClient({ clientName: null, ...options }));
}

/** `A <key> <lease> <wait>` → its fields. */
function acquireFields(line: string): { key: string; lease: string; wait: string } {
  const [op, key = '', lease = '', wait = ''] = line.split(' ');
  expect(op).toBe('A');
  return { key, lease, wait };
}

/** Grants every acquire at once with the given token and releases every token as OK. */
function grantingScript(token: string): LineScript {
  return {
    onLine: (connection, line) => {
      const { key } = line.startsWith('A ') ? acquireFields(line) : { key: line.split(' ')[1] };
      connection.send(line.startsWith('A ') ? `A ${key} ${token}` : `R ${key} OK`);
    },
  };
}

// ---- The behaviour ----

describe('KeyedClient', () => {
  it('matches pipelined replies to the right keys when they come back out of order', async () => {
    const tokens: Record<string, string> = { a: '11', b: '22', c: '33', d: '18446744073709551615' };
    const held: FakeConnection[] = [];
    const server = await fakeServer({
      onLine: (connection) => {
        if (!held.includes(connection)) held.push(connection);
        // Once all four are in, answer each connection's requests newest first.
        if (server.lines.length < 4) return;
        for (const each of held) {
          each.send(...[...each.lines].reverse().map((line) => `A ${acquireFields(line).key} ${tokens[acquireFields(line).key]}`));
        }
      },
    });
    const keyed = client({ addresses: [server.address] });
    const grants = await Promise.all(['a', 'b', 'c', 'd'].map((key) => keyed.acquire(key, { lease: 1000 })));
    expect(grants.map((grant) => [grant.key, grant.token])).toEqual([
      ['a', 11n],
      ['b', 22n],
      ['c', 33n],
      ['d', 18446744073709551615n],
    ]);
    // One address still gets two connections; requests go on the first open one, the other stands by.
    expect(server.connections.map((connection) => connection.lines.length).sort()).toEqual([0, 4]);
  });

  it('resolves acquires on one key in send order when replies share (op, key)', async () => {
    const server = await fakeServer({
      onLine: () => {
        if (server.lines.length < 4) return;
        // Token = the lease in ms, so each grant shows which request it answered.
        for (const connection of server.connections) {
          connection.send(...connection.lines.map((line) => `A k ${Number(acquireFields(line).lease) * 1000}`));
        }
      },
    });
    const keyed = client({ addresses: [server.address] });
    const leases = [1000, 2000, 3000, 4000];
    const grants = await Promise.all(leases.map((lease) => keyed.acquire('k', { lease })));
    expect(grants.map((grant) => grant.token)).toEqual([1000n, 2000n, 3000n, 4000n]);
    expect(server.connections.map((connection) => connection.lines.length).sort()).toEqual([0, 4]);
  });

  it('sends requests made in the same tick in one write', async () => {
    const server = await fakeServer(grantingScript('1'));
    const keyed = client({ addresses: [server.address] });
    await Promise.all([keyed.acquire('warm-1', { lease: 1000 }), keyed.acquire('warm-2', { lease: 1000 })]);
    // Count the client's socket writes (the fake server is in this process and reads
    // everything at once, so chunks seen by it cannot tell batched writes from single ones).
    const write = vi.spyOn(net.Socket.prototype, 'write');
    try {
      await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((key) => keyed.acquire(key, { lease: 1000 })));
      const clientWrites = (write.mock.contexts as net.Socket[]).filter((socket) => socket.remotePort === server.port);
      expect(clientWrites.length).toBe(1);
    } finally {
      write.mockRestore();
    }
    expect(server.lines.length).toBe(8);
  });

  it('converts ms to decimal seconds on the wire and rejects T with LockTimeoutError', async () => {
    const server = await fakeServer({ onLine: (connection, line) => connection.send(`T ${acquireFields(line).key}`) });
    const keyed = client({ addresses: [server.address] });
    const outcome = await keyed.acquire('jobs/x', { lease: 1500, wait: 250 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(outcome).toMatchObject({ key: 'jobs/x', waitMs: 250, code: 'lock-timeout' });
    expect(server.lines).toEqual(['A jobs/x 1.5 0.25']);
  });

  it('rejects an E reply with a BatonError named as on the wire, keeping the server text', async () => {
    const server = await fakeServer({
      onLine: (connection) => connection.send('E A jobs/x kicked removed from the queue by an admin'),
    });
    const keyed = client({ addresses: [server.address] });
    const outcome = await keyed.acquire('jobs/x', { lease: 1000 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(BatonError);
    expect(outcome).toMatchObject({ code: 'kicked', message: 'removed from the queue by an admin' });
  });

  it('refuses a key with a space before sending anything', async () => {
    const server = await fakeServer(grantingScript('1'));
    const keyed = client({ addresses: [server.address] });
    await expect(keyed.acquire('two words', { lease: 1000 })).rejects.toMatchObject({ code: 'bad-key' });
    expect(server.lines).toEqual([]);
  });

  it('refuses, before sending, names the server would refuse or read as another key', async () => {
    const server = await fakeServer(grantingScript('1'));
    const keyed = client({ addresses: [server.address] });
    // NBSP, line separator, BOM, a lone surrogate (sent as U+FFFD it would be granted as "a\ufffd"), 251 bytes.
    for (const key of ['a\u00a0b', 'a\u2028b', '\ufeffk', 'a\ud800', 'é'.repeat(125) + 'x']) {
      await expect(keyed.acquire(key, { lease: 1000 })).rejects.toMatchObject({ code: 'bad-key' });
      await expect(keyed.release(key, 1n)).rejects.toMatchObject({ code: 'bad-key' });
    }
    await expect(keyed.acquire('café/漢', { lease: 1000 })).resolves.toMatchObject({ key: 'café/漢' });
    expect(server.lines).toEqual(['A café/漢 1 0']);
  });

  it('ignores an E reply whose key matches no pending request', async () => {
    const server = await fakeServer({
      onLine: (connection) => connection.send('E A a??b bad-key bad key', 'E R zz stale-token gone', 'A k 6'),
    });
    const keyed = client({ addresses: [server.address] });
    await expect(keyed.acquire('k', { lease: 1000 })).resolves.toMatchObject({ key: 'k', token: 6n });
  });

  it('follows an M sent on connect to the active node', async () => {
    const active = await fakeServer(grantingScript('77'));
    const standby = await fakeServer({
      onConnect: (connection) => connection.send(`M ${active.address}`),
      onLine: (connection) => connection.send(`M ${active.address}`),
    });
    const keyed = client({ addresses: [standby.address] });
    const grant = await keyed.acquire('k', { lease: 1000 });
    expect(grant.token).toBe(77n);
    expect(active.lines).toEqual(['A k 1 0']);
  });

  it('sends a request again to the active node when a standby answers it with M', async () => {
    const active = await fakeServer(grantingScript('78'));
    const standby = await fakeServer({ onLine: (connection) => connection.send(`M ${active.address}`) });
    const keyed = client({ addresses: [standby.address] });
    const grant = await keyed.acquire('k', { lease: 1000, wait: 5000 });
    expect(grant.token).toBe(78n);
    expect(standby.lines).toEqual(['A k 1 5']);
    // Sent again with what is left of the 5 s wait.
    const { wait } = acquireFields(active.lines[0] ?? '');
    expect(Number(wait)).toBeGreaterThan(4);
    expect(Number(wait)).toBeLessThan(5);
  });

  it('moves an acquire to the next connection when its connection drops', async () => {
    const dying = await fakeServer({ onLine: (connection) => connection.socket.destroy() });
    const healthy = await fakeServer(grantingScript('5'));
    const keyed = client({ addresses: [dying.address, healthy.address] });
    const grant = await keyed.acquire('k', { lease: 1000 });
    expect(grant.token).toBe(5n);
    expect(dying.lines).toEqual(['A k 1 0']);
    expect(healthy.lines).toEqual(['A k 1 0']);
  });

  it('fails an acquire after as many tries as there are connections, with the last reason given', async () => {
    const first = await fakeServer({ onLine: (connection) => connection.socket.destroy() });
    const second = await fakeServer({
      onLine: (connection) => {
        connection.send('E - - server-going-away server going away');
        connection.socket.end();
      },
    });
    const keyed = client({ addresses: [first.address, second.address] });
    const outcome = await keyed.acquire('k', { lease: 1000 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(BatonError);
    expect(outcome).toMatchObject({ code: 'server-going-away', message: 'server going away' });
    expect(first.lines).toEqual(['A k 1 0']);
    expect(second.lines).toEqual(['A k 1 0']);
  });

  it('retries a release on another connection when the first one dies under it', async () => {
    const dying = await fakeServer({
      onLine: (connection, line) => (line.startsWith('A ') ? connection.send('A k 7') : connection.socket.destroy()),
    });
    const healthy = await fakeServer(grantingScript('8'));
    const keyed = client({ addresses: [dying.address, healthy.address] });
    const grant = await keyed.acquire('k', { lease: 1000 });
    expect(grant.token).toBe(7n);
    const started = performance.now();
    await expect(grant.release()).resolves.toBe(true);
    expect(dying.lines).toEqual(['A k 1 0', 'R k 7']);
    expect(healthy.lines).toEqual(['R k 7']);
    // Not sent again at once: the retry waits its 200 ms interval.
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('reconnects a dropped connection in the background and a waiting release gets through', async () => {
    let server = await fakeServer(grantingScript('9'));
    const port = server.port;
    const keyed = client({ addresses: [server.address], reconnectInterval: 300 });
    const grant = await keyed.acquire('k', { lease: 1000 });
    await server.close(); // both connections drop; reconnects are refused for now
    const release = grant.release();
    await new Promise((resolve) => setTimeout(resolve, 500));
    server = await fakeServer(grantingScript('9'), port);
    await expect(release).resolves.toBe(true);
    expect(server.lines).toEqual(['R k 9']);
  });

  it('a connection that was serving comes home at once when its node dies, and an acquire then goes through', async () => {
    // Three homes: a standby that redirects to the active, the active itself, another standby.
    let active = await fakeServer(grantingScript('10'));
    const standby = await fakeServer({
      onConnect: (connection) => connection.send(`M ${active.address}`),
      onLine: (connection) => connection.send(`M ${active.address}`),
    });
    const keyed = client({ addresses: [standby.address], reconnectInterval: 1000 });
    await keyed.acquire('k', { lease: 1000 });
    const before = standby.connections.length;
    const port = active.port;
    const diedAt = performance.now();
    await active.close(); // the active node dies
    // Both connections come home to the standby at once, not after the 1 s interval.
    await standby.until(() => standby.connections.length >= before + 2);
    const cameBackAt = performance.now();
    expect(cameBackAt - diedAt).toBeLessThan(600);
    active = await fakeServer(grantingScript('11'), port);
    const grant = await keyed.acquire('k', { lease: 1000, wait: 2000 });
    expect(grant.token).toBe(11n);
    expect(performance.now() - cameBackAt).toBeLessThan(600);
  });

  it('when the node a redirect names cannot be reached, the connection comes home again soon, not after the interval', async () => {
    const gone = await fakeServer({});
    const deadAddress = gone.address;
    await gone.close();
    const standby = await fakeServer({ onConnect: (connection) => connection.send(`M ${deadAddress}`) });
    const keyed = client({ addresses: [standby.address], reconnectInterval: 5000 });
    const started = performance.now();
    void keyed.acquire('k', { lease: 1000, wait: 3000 }).catch(() => {});
    // Two connections (one address) come home about every 200 ms: several visits within 1 s.
    await standby.until(() => standby.connections.length >= 6);
    // Without the quick return it takes two full 5 s intervals.
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('an acquire made while every connection is reconnecting waits for one instead of failing at once', async () => {
    let server = await fakeServer(grantingScript('12'));
    const port = server.port;
    const keyed = client({ addresses: [server.address], reconnectInterval: 300 });
    await keyed.acquire('k', { lease: 1000 });
    await server.close(); // both connections drop; the reconnects are refused for now
    await new Promise((resolve) => setTimeout(resolve, 50));
    const pending = keyed.acquire('k', { lease: 1000, wait: 3000 });
    server = await fakeServer(grantingScript('13'), port);
    await expect(pending).resolves.toMatchObject({ token: 13n });
  });

  it('a connection turned away soon after it came up waits the interval before trying again', async () => {
    const rude = await fakeServer({ onConnect: (connection) => connection.socket.destroy() });
    const keyed = client({ addresses: [rude.address], reconnectInterval: 300 });
    const outcome = await keyed.acquire('k', { lease: 1000 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(BatonError);
    const after = rude.connections.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(rude.connections.length).toBe(after);
  });

  it('resolves release() to false on STALE and returns the same promise when called twice', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => connection.send(line.startsWith('A ') ? 'A k 3' : 'R k STALE'),
    });
    const keyed = client({ addresses: [server.address] });
    const grant = await keyed.acquire('k', { lease: 1000 });
    const first = grant.release();
    expect(grant.release()).toBe(first);
    await expect(first).resolves.toBe(false);
    expect(server.lines.filter((line) => line.startsWith('R '))).toEqual(['R k 3']);
  });

  it('withLock releases the lock when the work throws, and rethrows the work error', async () => {
    const server = await fakeServer(grantingScript('12'));
    const keyed = client({ addresses: [server.address] });
    const failure = new Error('work failed');
    await expect(
      keyed.withLock('k', { lease: 1000 }, (grant) => {
        expect(grant.token).toBe(12n);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(server.lines).toEqual(['A k 1 0', 'R k 12']);
  });

  it('withLock resolves to the work result after releasing', async () => {
    const server = await fakeServer(grantingScript('13'));
    const keyed = client({ addresses: [server.address] });
    await expect(keyed.withLock('k', { lease: 250 }, async (grant) => `done ${grant.token}`)).resolves.toBe('done 13');
    expect(server.lines).toEqual(['A k 0.25 0', 'R k 13']);
  });

  it('fails pending acquires on close() and refuses new ones', async () => {
    const server = await fakeServer({}); // never answers
    const keyed = client({ addresses: [server.address] });
    const pending = keyed.acquire('k', { lease: 1000 }).catch((error: unknown) => error);
    await server.until(() => server.lines.length === 1);
    await keyed.close();
    expect(await pending).toMatchObject({ code: 'client-closed' });
    await expect(keyed.acquire('k', { lease: 1000 })).rejects.toMatchObject({ code: 'client-closed' });
  });
});
