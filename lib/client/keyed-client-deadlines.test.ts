// The keyed client's own deadlines: a server that stops answering (stalled process, TCP still
// up) must not leave an acquire or a release pending forever.
import { describe, it, expect } from 'vitest';
import { BatonError } from '../errors.ts';
import { KeyedClient } from './keyed-client.ts';
import type { KeyedClientOptions } from './keyed-client.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import type { FakeConnection } from './testing/fake-line-server.ts';

const fakes = fakeLineServers<KeyedClient>();
const fakeServer = fakes.start;

function client(options: KeyedClientOptions): KeyedClient {
  return fakes.track(new KeyedClient({ clientName: null, ...options }));
}

const keyOf = (line: string): string => line.split(' ')[1] ?? '';
const isGone = (connection: FakeConnection | undefined): boolean => connection?.socket.destroyed === true || connection?.socket.readableEnded === true;

/** Settles `promise` and says after how many ms, with its value or its error. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; outcome: T | unknown }> {
  const started = performance.now();
  const outcome = await promise.catch((error: unknown) => error);
  return { ms: performance.now() - started, outcome };
}

describe('KeyedClient deadlines', () => {
  it('rejects a 300 ms acquire with LockTimeoutError after wait + margin when the server is silent', async () => {
    const server = await fakeServer({}); // accepts and reads, never answers
    const keyed = client({ addresses: [server.address] });
    const { ms, outcome } = await timed(keyed.acquire('k', { lease: 1000, wait: 300 }));
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(outcome).toMatchObject({ key: 'k', waitMs: 300, code: 'lock-timeout' });
    expect(ms).toBeGreaterThanOrEqual(1300); // 300 + 1000 + 30, less timer slack
    expect(ms).toBeLessThan(2500);
    expect(server.lines).toEqual(['A k 1 0.3']);
  });

  it('drops the connection of an acquire that passed its deadline, so the server forgets it', async () => {
    const server = await fakeServer({});
    const keyed = client({ addresses: [server.address] });
    await keyed.acquire('k', { lease: 1000, wait: 100 }).catch(() => undefined);
    const used = server.connections.find((connection) => connection.lines.length > 0);
    await server.until(() => isGone(used));
  });

  it('moves the other requests of that connection to another one', async () => {
    // Silent on a connection that carries `x`; grants everything on the others.
    const server = await fakeServer({
      onLine: (connection, line) => {
        if (!connection.lines.some((seen) => keyOf(seen) === 'x')) connection.send(`A ${keyOf(line)} 9`);
      },
    });
    const keyed = client({ addresses: [server.address] });
    // Round-robin over the two connections: x and y share the first, z takes the second.
    const x = keyed.acquire('x', { lease: 1000, wait: 100 }).catch((error: unknown) => error);
    const z = keyed.acquire('z', { lease: 1000 });
    const y = keyed.acquire('y', { lease: 1000 }); // waits forever: only the drop moves it
    await expect(z).resolves.toMatchObject({ key: 'z', token: 9n });
    expect(await x).toBeInstanceOf(LockTimeoutError);
    await expect(y).resolves.toMatchObject({ key: 'y', token: 9n });
    expect(server.lines.filter((line) => keyOf(line) === 'y')).toEqual(['A y 1 0', 'A y 1 0']);
  });

  it('keeps no deadline of its own for an acquire that waits forever (wait 0)', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => setTimeout(() => connection.send(`A ${keyOf(line)} 4`), 1300),
    });
    const keyed = client({ addresses: [server.address] });
    const { ms, outcome } = await timed(keyed.acquire('slow', { lease: 1000, wait: 0 }));
    expect(outcome).toMatchObject({ key: 'slow', token: 4n });
    expect(ms).toBeGreaterThanOrEqual(1250); // past the 1 s margin a finite wait of 0 would get
  });

  it('treats a wait longer than a timer can hold as forever rather than expiring it at once', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => setTimeout(() => connection.send(`A ${keyOf(line)} 5`), 50),
    });
    const keyed = client({ addresses: [server.address] });
    const thirtyDays = 30 * 24 * 3600 * 1000;
    await expect(keyed.acquire('long', { lease: 1000, wait: thirtyDays })).resolves.toMatchObject({ token: 5n });
  });

  it('retries a release that gets no answer on another connection, within the retry window', async () => {
    // Grants, then never answers a release.
    const stalled = await fakeServer({
      onLine: (connection, line) => {
        if (line.startsWith('A ')) connection.send(`A ${keyOf(line)} 7`);
      },
    });
    const healthy = await fakeServer({ onLine: (connection, line) => connection.send(`R ${keyOf(line)} OK`) });
    const keyed = client({ addresses: [stalled.address, healthy.address] });
    const grant = await keyed.acquire('k', { lease: 5000 });
    const { ms, outcome } = await timed(grant.release());
    expect(outcome).toBe(true);
    expect(stalled.lines).toEqual(['A k 5 0', 'R k 7']);
    expect(healthy.lines).toEqual(['R k 7']);
    expect(ms).toBeGreaterThanOrEqual(1000); // one attempt's deadline
    expect(ms).toBeLessThan(2500);
  });

  it('rejects a release with a BatonError when no server answers it before the retries run out', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => {
        if (line.startsWith('A ')) connection.send(`A ${keyOf(line)} 7`);
      },
    });
    const keyed = client({
      addresses: [server.address],
      releaseRetryFor: 1500,
      releaseAttemptTimeout: 400,
      reconnectInterval: 100,
    });
    const grant = await keyed.acquire('k', { lease: 5000 });
    const { ms, outcome } = await timed(grant.release());
    expect(outcome).toBeInstanceOf(BatonError);
    expect(['io-timeout', 'connection-lost']).toContain((outcome as BatonError).code);
    expect((outcome as BatonError).message).toMatch(/no answer to release "k"/);
    expect(ms).toBeGreaterThanOrEqual(1300);
    expect(ms).toBeLessThan(2500);
    // Tried again on the other connection and on reconnected ones, not just once.
    expect(server.lines.filter((line) => line.startsWith('R ')).length).toBeGreaterThanOrEqual(3);
  });
});

// The server answers `A`s on one key on one connection in send order: a `T` (or an immediate
// `E A`) waits until every earlier waiting `A` on that key there is answered.
describe('KeyedClient deadlines of acquires held back behind an earlier one', () => {
  /** Acquires on `k`, all on the first of two connections (the client uses its first open one). */
  async function sameKeyOnOneConnection(script: Parameters<typeof fakeServer>[0], waits: (number | undefined)[]) {
    const server = await fakeServer(script);
    const other = await fakeServer({ onLine: (connection, line) => connection.send(`A ${keyOf(line)} 9`) });
    const keyed = client({ addresses: [server.address, other.address] });
    const log: string[] = [];
    const started = performance.now();
    const acquires = waits.map((wait, i) => {
      const p = keyed.acquire('k', { lease: 1000, wait });
      return p.then(
        (grant) => {
          log.push(`${i} granted ${grant.token}`);
          return grant;
        },
        (error: unknown) => {
          log.push(`${i} ${(error as Error).constructor.name}`);
          return error;
        },
      );
    });
    return { server, log, started, acquires };
  }

  it('does not time out an acquire while earlier ones on its key on its connection wait', async () => {
    let logAtFirstGrant: string[] = [];
    const { server, log, started, acquires } = await sameKeyOnOneConnection(
      {
        onLine: (connection) => {
          if (connection.lines.length < 3) return;
          setTimeout(() => {
            logAtFirstGrant = [...log];
            connection.send('A k 1');
          }, 2500);
          setTimeout(() => connection.send('A k 2'), 2800);
          setTimeout(() => connection.send('T k'), 3100);
        },
      },
      [undefined, undefined, 100],
    );
    const [first, second, third] = await Promise.all(acquires);
    expect(logAtFirstGrant).toEqual([]); // the 100 ms acquire outlived its deadline (1110 ms) twice
    expect(log).toEqual(['0 granted 1', '1 granted 2', '2 LockTimeoutError']);
    expect(first).toMatchObject({ key: 'k', token: 1n });
    expect(second).toMatchObject({ key: 'k', token: 2n });
    expect(third).toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(3000);
    // Never dropped, so nothing was sent again and no queue place was lost.
    expect(server.connections).toHaveLength(1);
    expect(isGone(server.connections[0])).toBe(false);
    expect(server.lines).toEqual(['A k 1 0', 'A k 1 0', 'A k 1 0.1']);
  });

  it('gives an acquire that just became the oldest on its key a margin from then', async () => {
    // The first is granted just before the second's deadline (1110 ms); the `T` comes 550 ms later.
    const { server, log, started, acquires } = await sameKeyOnOneConnection(
      {
        onLine: (connection) => {
          if (connection.lines.length < 2) return;
          setTimeout(() => connection.send('A k 1'), 1050);
          setTimeout(() => connection.send('T k'), 1600);
        },
      },
      [undefined, 100],
    );
    await Promise.all(acquires);
    expect(log).toEqual(['0 granted 1', '1 LockTimeoutError']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1550); // rejected by the `T`
    expect(server.connections).toHaveLength(1);
    expect(isGone(server.connections[0])).toBe(false);
    expect(server.lines).toEqual(['A k 1 0', 'A k 1 0.1']);
  });

  it('lets a reply already received win over a deadline passed while the event loop was busy', async () => {
    let started = 0;
    const server = await fakeServer({
      onLine: (connection, line) => {
        connection.send(`A ${keyOf(line)} 7`);
        // Busy past the client's deadline (100 + 1000 + 10 ms) with the grant in its socket.
        while (performance.now() < started + 1400);
      },
    });
    const keyed = client({ addresses: [server.address] });
    started = performance.now();
    const { outcome } = await timed(keyed.acquire('job', { lease: 1000, wait: 100 }));
    expect(outcome).toMatchObject({ key: 'job', token: 7n });
    // Measured from the busy loop's own start: timed() starts a hair later.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    expect(server.lines).toEqual(['A job 1 0.1']);
    expect(server.connections.some(isGone)).toBe(false);
  });
});
