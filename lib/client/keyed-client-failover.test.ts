// Where an acquire goes when the active node dies under it (kill -9): the connections that a
// standby's `M` had led to that node die with it, each a moment later than the first (a dying
// process closes its sockets one by one). The same case as clients/python/tests/
// test_keyed_readers.py's last test and clients/go/keyed_failover_test.go.
import { describe, expect, it } from 'vitest';
import { KeyedClient } from './keyed-client.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import type { FakeConnection, FakeLineServer } from './testing/fake-line-server.ts';

const fakes = fakeLineServers<KeyedClient>();

describe('KeyedClient when the active node dies', () => {
  it('does not send an acquire lost with the active along connections a redirect led there: it waits for one to come home', async () => {
    let promoted = false;
    const granted: string[] = [];
    // a: the active; it never answers (the lock is someone else's).
    const a = await fakes.start({});
    // b and c: standbys that send every connection to a until the failover; then b grants every
    // acquire with token 9, and c points at b.
    const standby = (newActive: () => FakeLineServer | undefined) => ({
      onConnect: (connection: FakeConnection) => {
        const target = promoted ? newActive() : a;
        if (target !== undefined) connection.send(`M ${target.address}`);
      },
      onLine: (connection: FakeConnection, line: string) => {
        if (!promoted) return connection.send(`M ${a.address}`);
        if (newActive() !== undefined || !line.startsWith('A ')) return;
        granted.push(line);
        connection.send(`A ${line.split(' ')[1]} 9`);
      },
    });
    const b = await fakes.start(standby(() => undefined));
    const c = await fakes.start(standby(() => b));
    const keyed = fakes.track(
      new KeyedClient({ addresses: [a.address, b.address, c.address], clientName: null, reconnectInterval: 1000, connectTimeout: 1000 }),
    );
    // The first connection (home a) carries it; the other two reach a through b's and c's M.
    const pending = keyed.acquire('readers/later', { lease: 30_000, wait: 10_000 });
    const carrying = (): FakeConnection[] => a.connections.filter((connection) => connection.lines.includes('A readers/later 30 10'));
    await a.until(() => a.connections.length === 3 && carrying().length === 1);
    const [first] = carrying();
    promoted = true;
    first?.socket.destroy(); // the socket carrying the acquire closes first ...
    // ... the others only once the acquire could have moved onto them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await a.close();
    const grant = await pending;
    expect(grant.token).toBe(9n);
    expect(granted).toHaveLength(1);
    // It never went back to the node it had reached only through a redirect.
    expect(a.lines).toEqual(['A readers/later 30 10']);
  });

  it('does not send a parked acquire to the dead node when a connection comes home while another one there is still open', async () => {
    let promoted = false;
    const granted: string[] = [];
    // a: the active; it never answers (the lock is someone else's).
    const a = await fakes.start({});
    // b: the one address the client has, a standby that sends every connection to a until the
    // failover; then it grants every acquire with token 9.
    const b = await fakes.start({
      onConnect: (connection) => {
        if (!promoted) connection.send(`M ${a.address}`);
      },
      onLine: (connection, line) => {
        if (!promoted) return connection.send(`M ${a.address}`);
        if (!line.startsWith('A ')) return;
        granted.push(line);
        connection.send(`A ${line.split(' ')[1]} 9`);
      },
    });
    // One address: two connections, both led to a by b's M.
    const keyed = fakes.track(new KeyedClient({ addresses: [b.address], clientName: null, reconnectInterval: 1000, connectTimeout: 1000 }));
    const pending = keyed.acquire('readers/later', { lease: 30_000, wait: 10_000 });
    const acquires = (): string[] => a.lines.filter((line) => line.startsWith('A readers/later '));
    await a.until(() => a.connections.length === 2 && acquires().length === 1);
    const first = a.connections.find((connection) => connection.lines.length > 0);
    promoted = true;
    // The socket carrying the acquire closes; the other one stays open (a dying process that is
    // slow to close its sockets, or a loaded machine) until the connection that lost the acquire
    // has come home to b and the acquire has gone somewhere again: to b, or back to a.
    first?.socket.destroy();
    await Promise.race([b.until(() => granted.length > 0), a.until(() => acquires().length > 1)]);
    await a.close();
    const grant = await pending;
    expect(grant.token).toBe(9n);
    expect(granted).toHaveLength(1);
    // It went to a once (led there by b's M, with what was left of its wait), never again.
    expect(acquires()).toHaveLength(1);
  });
});
