// The SessionClient's default, resumable sessions, against scripted servers on 127.0.0.1: the
// claim key on ACQUIRE, RESUME after MOVED or a dropped connection, and the limits (an unknown
// claim, or no answer within 0.8 x lease, still abort the work).
import { describe, expect, it } from 'vitest';
import { BatonError } from '../errors.ts';
import { DEFAULT_DETACH_LIMITS } from '../engine/lock-engine.ts';
import { SessionClient } from './session-client.ts';
import { DEFAULT_MAX_PARK_MS } from './session-client-connection.ts';
import type { SessionClientOptions } from './session-client.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import type { FakeConnection } from './testing/fake-line-server.ts';

const fakes = fakeLineServers<SessionClient>();
const client = (options: SessionClientOptions): SessionClient => fakes.track(new SessionClient({ clientName: null, ...options }));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const KEYED_ACQUIRE = /^ACQUIRE (\S+) (\d+) ([0-9a-f]{32})$/;

/** A server that holds claims like Baton does for the lines these tests need: ACQUIRE, RESUME, HEARTBEAT. */
function holdingScript(token: string, onAcquire?: (c: FakeConnection) => void) {
  return {
    onLine: (connection: FakeConnection, line: string) => {
      if (line.startsWith('ACQUIRE ') && onAcquire) return onAcquire(connection);
      connection.send(`ACQUIRED ${token}`);
    },
  };
}

describe('resumable sessions (SessionClient default)', () => {
  it('sends a random 128-bit claim key with ACQUIRE, a new one for each claim', async () => {
    const server = await fakes.start(holdingScript('5'));
    const sessions = client({ addresses: [server.address] });
    await sessions.hold('a', { lease: 1000 }, () => undefined);
    await sessions.hold('a', { lease: 1000 }, () => undefined);
    const keys = server.lines.filter((l) => l.startsWith('ACQUIRE')).map((l) => KEYED_ACQUIRE.exec(l)?.[3]);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1]).not.toBe(keys[0]);
  });

  it('on MOVED takes the claim up at the named node with RESUME and the same key, and the work goes on', async () => {
    const successor = await fakes.start(holdingScript('9'));
    const old = await fakes.start(
      holdingScript('9', (c) => {
        c.send('ACQUIRED 9');
        setTimeout(() => {
          c.send(`MOVED ${successor.address}`);
          c.socket.end();
        }, 100);
      }),
    );
    const sessions = client({ addresses: [old.address, successor.address] });
    const result = await sessions.hold('job', { lease: 1000 }, async ({ signal, token }) => {
      await successor.until(() => successor.lines.includes('HEARTBEAT'));
      return { aborted: signal.aborted, token };
    });
    expect(result).toEqual({ aborted: false, token: 9n });
    const key = KEYED_ACQUIRE.exec(old.lines[0] ?? '')?.[3];
    expect(successor.lines[0]).toBe(`RESUME job ${key}`);
  });

  it('when the connection drops without a word, looks for the claim at the next address', async () => {
    const standby = await fakes.start(holdingScript('3'));
    const active = await fakes.start(
      holdingScript('3', (c) => {
        c.send('ACQUIRED 3');
        setTimeout(() => c.socket.destroy(), 60);
      }),
    );
    const sessions = client({ addresses: [active.address, standby.address] });
    const aborted = await sessions.hold('crash', { lease: 1000 }, async ({ signal }) => {
      await standby.until(() => standby.lines.filter((l) => l === 'HEARTBEAT').length >= 2);
      return signal.aborted;
    });
    expect(aborted).toBe(false);
    expect(standby.lines[0]).toMatch(/^RESUME crash [0-9a-f]{32}$/);
  });

  it('aborts the work when the new node does not know the claim (0x09), and does not ask again', async () => {
    const successor = await fakes.start({ onLine: (c) => c.send('ERROR 0x09 claim unknown: no claim with that key is waiting to be resumed here') });
    const old = await fakes.start(
      holdingScript('4', (c) => {
        c.send('ACQUIRED 4');
        setTimeout(() => c.send(`MOVED ${successor.address}`), 50);
      }),
    );
    const sessions = client({ addresses: [old.address] });
    const reason = await sessions.hold(
      'gone',
      { lease: 2000 },
      ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true })),
    );
    expect(reason).toBeInstanceOf(BatonError);
    expect(reason).toMatchObject({ code: 'claim-unknown' });
    await sleep(50);
    expect(successor.lines).toHaveLength(1);
  });

  it('never holds on past 0.8 x lease from the last confirmation while no node answers the RESUME', async () => {
    let lastAnsweredAt = 0;
    const silent = await fakes.start({}); // accepts, never answers (a node holding its clients)
    const old = await fakes.start({
      onLine: (c) => {
        lastAnsweredAt = performance.now();
        c.send('ACQUIRED 6');
        setTimeout(() => c.socket.destroy(), 30);
      },
    });
    const sessions = client({ addresses: [old.address, silent.address] });
    const at = await sessions.hold(
      'late',
      { lease: 1000 },
      ({ signal }) => new Promise<number>((resolve) => signal.addEventListener('abort', () => resolve(performance.now()), { once: true })),
    );
    expect(at - lastAnsweredAt).toBeGreaterThan(700);
    expect(at - lastAnsweredAt).toBeLessThan(1000);
    expect(silent.lines[0]).toMatch(/^RESUME late /);
  });

  it("between connections aborts by 0.8 x the servers' --max-park when it is shorter than the lease: they end the claim then, telling nobody", async () => {
    let lastAnsweredAt = 0;
    const silent = await fakes.start({});
    const old = await fakes.start({
      onLine: (c) => {
        lastAnsweredAt = performance.now();
        c.send('ACQUIRED 7');
        setTimeout(() => c.socket.destroy(), 30);
      },
    });
    const sessions = client({ addresses: [old.address, silent.address], maxPark: 1_000 });
    const at = await sessions.hold('parked', { lease: 20_000 }, ({ signal }) =>
      Promise.race([
        new Promise<number>((resolve) => signal.addEventListener('abort', () => resolve(performance.now()), { once: true })),
        sleep(3_000).then(() => Number.POSITIVE_INFINITY),
      ]),
    );
    expect(at - lastAnsweredAt).toBeGreaterThan(700);
    expect(at - lastAnsweredAt).toBeLessThan(1_000);
  });

  it("assumes the servers' default --max-park, and refuses a maxPark that is not a positive number", () => {
    expect(DEFAULT_MAX_PARK_MS).toBe(DEFAULT_DETACH_LIMITS.maxMs);
    for (const maxPark of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => new SessionClient({ maxPark })).toThrow(RangeError);
  });

  it('a waiter whose connection drops keeps its place: RESUME, WAITING, then the pushed grant', async () => {
    const standby = await fakes.start({
      onLine: (c, line) => {
        if (line.startsWith('RESUME')) {
          c.send('WAITING 1');
          setTimeout(() => c.send('ACQUIRED 12'), 80);
        } else c.send('ACQUIRED 12');
      },
    });
    const active = await fakes.start({
      onLine: (c) => {
        c.send('WAITING 2');
        setTimeout(() => c.socket.destroy(), 40);
      },
    });
    const positions: number[] = [];
    const sessions = client({ addresses: [active.address, standby.address] });
    const token = await sessions.hold('q', { lease: 1000, onWaiting: (p) => positions.push(p) }, ({ token }) => token);
    expect(token).toBe(12n);
    expect(positions).toEqual([2, 1]);
    expect(standby.lines[0]).toMatch(/^RESUME q /);
  });
});
