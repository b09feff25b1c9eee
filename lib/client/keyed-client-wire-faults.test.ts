// What the keyed client does with replies that a correct server never sends, or sends only as it
// goes away; found by the conformance kit (conformance/vectors/keyed-bad-bytes.json,
// keyed-connection-errors.json).
import { describe, expect, it } from 'vitest';
import { BatonError } from '../errors.ts';
import { KeyedClient } from './keyed-client.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';

const fakes = fakeLineServers<KeyedClient>();

function client(address: string): KeyedClient {
  return fakes.track(new KeyedClient({ addresses: [address], clientName: null }));
}

describe('KeyedClient against replies no request asked for', () => {
  it('drops the connection on a grant that answers no request, and the acquire fails with protocol-error once every connection saw the same', async () => {
    const server = await fakes.start({ onLine: (connection) => connection.send('A other 7') });
    const error = await client(server.address)
      .acquire('x', { lease: 1000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BatonError);
    expect((error as BatonError).code).toBe('protocol-error');
    // Sent on one connection, dropped there, sent again on the other: two tries for two connections.
    expect(server.lines).toEqual(['A x 1 0', 'A x 1 0']);
  });

  it('drops the connection on a release answer with no release outstanding', async () => {
    const server = await fakes.start({ onLine: (connection) => connection.send('R x OK', 'A x 5') });
    const error = await client(server.address)
      .acquire('x', { lease: 1000 })
      .catch((caught: unknown) => caught);
    // The stray R x OK came before the grant: the grant after it on that socket is not trusted.
    expect((error as BatonError).code).toBe('protocol-error');
  });
});

describe('KeyedClient when the server goes away', () => {
  it('sends again, and does not time out, an acquire that waits forever and is answered T just before E - - server-going-away', async () => {
    let first = true;
    const server = await fakes.start({
      onLine: (connection, line) => {
        if (!first) return connection.send('A x 9');
        first = false;
        connection.send('T x', 'E - - server-going-away server going away');
        connection.socket.end();
        expect(line).toBe('A x 1 0');
      },
    });
    const grant = await client(server.address).acquire('x', { lease: 1000 });
    expect(grant.token).toBe(9n);
    expect(server.lines).toEqual(['A x 1 0', 'A x 1 0']);
  });

  it('sends again, with what is left of its wait, a finite-wait acquire answered T long before its wait ran out', async () => {
    let first = true;
    const server = await fakes.start({
      onLine: (connection) => {
        if (!first) return connection.send('A x 9');
        first = false;
        connection.send('T x', 'E - - server-going-away server going away');
        connection.socket.end();
      },
    });
    const grant = await client(server.address).acquire('x', { lease: 1000, wait: 5000 });
    expect(grant.token).toBe(9n);
    const [sent, again] = server.lines;
    expect(sent).toBe('A x 1 5');
    expect(Number(again?.split(' ')[3])).toBeLessThan(5);
  });

  it('still takes a T that comes after the wait ran out as a timeout', async () => {
    const server = await fakes.start({ onLine: (connection) => setTimeout(() => connection.send('T x'), 80) });
    const error = await client(server.address)
      .acquire('x', { lease: 1000, wait: 50 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockTimeoutError);
  });
});
