// What the session client does with two answers it used to retry: exhausted fencing tokens and a
// line far too long. Found by the conformance kit (conformance/vectors/session-errors.json,
// session-bad-bytes.json).
import { describe, expect, it } from 'vitest';
import { BatonError } from '../errors.ts';
import { SessionClient } from './session-client.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';

const fakes = fakeLineServers<SessionClient>();

function client(address: string): SessionClient {
  return fakes.track(new SessionClient({ addresses: [address], resumable: false, clientName: null }));
}

async function failureOf(promise: Promise<unknown>): Promise<BatonError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof BatonError)) throw new Error(`expected a BatonError, got ${String(error)}`);
  return error;
}

describe('SessionClient on answers that another try cannot change', () => {
  it('fails the hold with tokens-exhausted at once, without asking again: the token sequence belongs to the whole cluster', async () => {
    const server = await fakes.start({ onLine: (connection) => connection.send('ERROR 0x07 fencing tokens exhausted') });
    const error = await failureOf(client(server.address).open('x', { lease: 1000 }));
    expect(error.code).toBe('tokens-exhausted');
    expect(server.connections).toHaveLength(1);
  });

  it('fails the hold with protocol-error when the server sends a line far too long, without asking again', async () => {
    const server = await fakes.start({ onLine: (connection) => connection.socket.write('A'.repeat(200_000)) });
    const error = await failureOf(client(server.address).open('x', { lease: 1000 }));
    expect(error.code).toBe('protocol-error');
    expect(server.connections).toHaveLength(1);
  });
});
