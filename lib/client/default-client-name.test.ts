import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { BatonError } from '../errors.ts';
import { isValidClientName } from '../protocol/client-name.ts';
import { defaultClientName } from './default-client-name.ts';
import { KeyedClient } from './keyed-client.ts';
import { SessionClient } from './session-client.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';

const keyedFakes = fakeLineServers<KeyedClient>();
const sessionFakes = fakeLineServers<SessionClient>();

describe('client identity in the client library', () => {
  it('defaults to <user>@<host> pid <pid>, a valid identity', () => {
    const name = defaultClientName();
    expect(name).toMatch(new RegExp(`@${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} pid ${process.pid}$`));
    expect(isValidClientName(name ?? '')).toBe(true);
    expect(Buffer.byteLength(defaultClientName('x'.repeat(300)) ?? '')).toBeLessThanOrEqual(128);
  });

  it('KeyedClient sends I <default identity> first on its socket, then its requests; the I OK answer is taken', async () => {
    const server = await keyedFakes.start({
      onLine: (connection, line) => {
        if (line.startsWith('I ')) connection.send('I OK');
        else if (line.startsWith('A ')) connection.send('A jobs 7');
      },
    });
    const keyed = keyedFakes.track(new KeyedClient({ addresses: [server.address] }));
    const grant = await keyed.acquire('jobs', { lease: 1000 });
    expect(grant.token).toBe(7n);
    const used = server.connections.find((c) => c.lines.some((l) => l.startsWith('A ')));
    expect(used?.lines).toEqual([`I ${defaultClientName()}`, 'A jobs 1 0']);
  });

  it('KeyedClient sends the clientName it is given, and nothing with clientName: null', async () => {
    const server = await keyedFakes.start({ onLine: (connection, line) => line.startsWith('A ') && connection.send('A jobs 1') });
    const named = keyedFakes.track(new KeyedClient({ addresses: [server.address], clientName: 'worker-7@host-3 pid 4121' }));
    await named.acquire('jobs', { lease: 1000 });
    await server.until(() => server.lines.includes('I worker-7@host-3 pid 4121'));
    const seed = await keyedFakes.start({ onLine: (connection, line) => line.startsWith('A ') && connection.send('A jobs 1') });
    const anonymous = keyedFakes.track(new KeyedClient({ addresses: [seed.address], clientName: null }));
    await anonymous.acquire('jobs', { lease: 1000 });
    expect(seed.lines).toEqual(['A jobs 1 0']);
  });

  it('KeyedClient sends its identity again first on the socket a redirect opens', async () => {
    const active = await keyedFakes.start({
      onLine: (connection, line) => {
        if (line.startsWith('I ')) connection.send('I OK');
        else if (line.startsWith('A ')) connection.send('A jobs 9');
      },
    });
    const standby = await keyedFakes.start({ onConnect: (connection) => connection.send(`M ${active.address}`) });
    const keyed = keyedFakes.track(new KeyedClient({ addresses: [standby.address], clientName: 'redirected worker' }));
    expect((await keyed.acquire('jobs', { lease: 1000 })).token).toBe(9n);
    const used = active.connections.find((c) => c.lines.some((l) => l.startsWith('A ')));
    expect(used?.lines).toEqual(['I redirected worker', 'A jobs 1 0']);
  });

  it('refuses a bad clientName with BatonError bad-identity before connecting', () => {
    for (const bad of ['', ' lead', 'tab\there', 'x'.repeat(129)]) {
      expect(() => new KeyedClient({ clientName: bad })).toThrow(expect.objectContaining({ code: 'bad-identity' }));
      expect(() => new SessionClient({ clientName: bad })).toThrow(BatonError);
    }
  });

  it('SessionClient sends CLIENT <identity> right before its ACQUIRE, and only ACQUIRE with clientName: null', async () => {
    const server = await sessionFakes.start({ onLine: (connection, line) => line.startsWith('ACQUIRE ') && connection.send('ACQUIRED 3') });
    const sessions = sessionFakes.track(new SessionClient({ addresses: [server.address], resumable: false, clientName: 'job runner 1' }));
    await sessions.hold('jobs', { lease: 1000 }, () => undefined);
    expect(server.lines).toEqual(['CLIENT job runner 1', 'ACQUIRE jobs 1000']);
    const seed = await sessionFakes.start({ onLine: (connection, line) => line.startsWith('ACQUIRE ') && connection.send('ACQUIRED 3') });
    const anonymous = sessionFakes.track(new SessionClient({ addresses: [seed.address], resumable: false, clientName: null }));
    await anonymous.hold('jobs', { lease: 1000 }, () => undefined);
    expect(seed.lines).toEqual(['ACQUIRE jobs 1000']);
  });
});
