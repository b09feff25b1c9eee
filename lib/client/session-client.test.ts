import { describe, expect, it, vi } from 'vitest';
import { BatonError } from '../errors.ts';
import { SessionClient } from './session-client.ts';
import type { SessionClientOptions } from './session-client.ts';
import type { SessionStats } from './session-client-connection.ts';
import { LockTimeoutError } from './lock-timeout-error.ts';
import { fakeLineServers } from './testing/fake-line-server.ts';
import type { LineScript } from './testing/fake-line-server.ts';

// ---- Scripted session-protocol servers on 127.0.0.1, port 0 ----

const fakes = fakeLineServers<SessionClient>();
const fakeServer = fakes.start;

/** A seed-protocol client (no claim key): these tests pin the protocol as it was before resuming; session-resume-client.test.ts has the default. */
function client(options: SessionClientOptions): SessionClient {
  return fakes.track(new SessionClient({ resumable: false, clientName: null, ...options }));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the signal's reason, and when (performance.now()), once it aborts. */
function aborted(signal: AbortSignal): Promise<{ reason: unknown; at: number }> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve({ reason: signal.reason, at: performance.now() }), { once: true });
  });
}

/** Answers ACQUIRE and every HEARTBEAT with ACQUIRED <token>. */
function grantingScript(token: string): LineScript {
  return { onLine: (connection) => connection.send(`ACQUIRED ${token}`) };
}

describe('SessionClient', () => {
  it('runs the work with the token, returns its result and releases by closing', async () => {
    const server = await fakeServer(grantingScript('42'));
    const sessions = client({ addresses: [server.address] });
    const result = await sessions.hold('jobs', { lease: 1000 }, async ({ token, signal }) => {
      expect(signal.aborted).toBe(false);
      return `ran with ${token}`;
    });
    expect(result).toBe('ran with 42');
    expect(server.lines).toEqual(['ACQUIRE jobs 1000']);
    await server.until(() => server.connections[0]?.socket.destroyed === true || server.connections[0]?.socket.readableEnded === true);
  });

  it('shortens the heartbeat interval by about twice the smoothed RTT', async () => {
    const delay = 50;
    const arrivals: number[] = [];
    const server = await fakeServer({
      onLine: (connection, line) => {
        if (line.startsWith('ACQUIRE ')) return connection.send('ACQUIRED 1');
        arrivals.push(performance.now());
        setTimeout(() => connection.send('ACQUIRED 1'), delay);
      },
    });
    const seen: SessionStats[] = [];
    const sessions = client({ addresses: [server.address], minHeartbeatInterval: 10 });
    const lease = await sessions.open('rtt', { lease: 1000, onHeartbeat: (stats) => seen.push(stats) });
    await server.until(() => seen.length >= 12);
    await lease.close();

    const first = seen[0];
    const last = seen[seen.length - 1];
    if (!first || !last || last.smoothedRtt === undefined) throw new Error('no heartbeat stats');
    // The first round trip already counts fully; later ones add 20 % each.
    expect(first.heartbeatInterval).toBeLessThan(250 - delay);
    expect(last.smoothedRtt).toBeGreaterThanOrEqual(delay * 0.9);
    expect(last.smoothedRtt).toBeLessThan(delay * 3);
    expect(last.heartbeatInterval).toBeCloseTo(250 - 2 * last.smoothedRtt, 6);
    expect(last.heartbeatInterval).toBeLessThan(250 - 1.5 * delay);
    // Seen from the server: heartbeats now arrive about every interval, not every lease/4.
    const gaps = arrivals
      .slice(-5)
      .map((at, i, all) => at - (all[i - 1] ?? at))
      .slice(1);
    const meanGap = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    expect(meanGap).toBeGreaterThan(last.heartbeatInterval - 20);
    expect(meanGap).toBeLessThan(240);
    // At most one heartbeat in flight: never two HEARTBEATs before an answer.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(delay - 5);
  });

  it('aborts the signal at 0.8 x lease after the last answer when the server goes silent', async () => {
    let answered = 0;
    let lastAnsweredAt = 0;
    const server = await fakeServer({
      onLine: (connection) => {
        if (answered >= 3) return; // ACQUIRE and two heartbeats, then silence
        answered++;
        lastAnsweredAt = performance.now();
        connection.send('ACQUIRED 4');
      },
    });
    const sessions = client({ addresses: [server.address] });
    const outcome = await sessions.hold('silent', { lease: 1000 }, ({ signal }) => aborted(signal));
    expect(outcome.reason).toBeInstanceOf(BatonError);
    expect(outcome.reason).toMatchObject({ code: 'lease-expired' });
    const after = outcome.at - lastAnsweredAt;
    expect(after).toBeGreaterThan(700);
    expect(after).toBeLessThan(1000); // before the server would let the lease go
    expect(server.lines).toEqual(['ACQUIRE silent 1000', 'HEARTBEAT', 'HEARTBEAT', 'HEARTBEAT']);
  });

  it('takes a pushed ACQUIRED after WAITING and only then runs the work', async () => {
    let pushedAt = 0;
    let holding = false;
    const server = await fakeServer({
      onConnect: (connection) => {
        setTimeout(() => {
          holding = true;
          pushedAt = performance.now();
          connection.send('ACQUIRED 77');
        }, 300);
      },
      onLine: (connection, line) => {
        if (line.startsWith('ACQUIRE ')) return connection.send('WAITING 2');
        connection.send(holding ? 'ACQUIRED 77' : 'WAITING 1');
      },
    });
    const positions: number[] = [];
    const sessions = client({ addresses: [server.address] });
    const ran = await sessions.hold('queue', { lease: 400, onWaiting: (position) => positions.push(position) }, ({ token, signal }) => ({
      token,
      at: performance.now(),
      aborted: signal.aborted,
    }));
    expect(ran.token).toBe(77n);
    expect(ran.aborted).toBe(false);
    expect(ran.at).toBeGreaterThanOrEqual(pushedAt);
    expect(positions[0]).toBe(2);
    expect(positions).toContain(1);
    expect(server.connections.length).toBe(1);
  });

  it('tells a push from the answer to a heartbeat that was in flight, and keeps holding', async () => {
    let heartbeats = 0;
    const server = await fakeServer({
      onLine: (connection, line) => {
        if (line.startsWith('ACQUIRE ')) return connection.send('WAITING 1');
        heartbeats++;
        if (heartbeats < 2) return connection.send('WAITING 1');
        if (heartbeats > 2) return connection.send('ACQUIRED 5');
        // The lock frees while this heartbeat is in flight: push first, answer it a bit later.
        connection.send('ACQUIRED 5');
        setTimeout(() => connection.send('ACQUIRED 5'), 30);
      },
    });
    const sessions = client({ addresses: [server.address] });
    const lease = await sessions.open('queue', { lease: 400 });
    expect(lease.token).toBe(5n);
    const answeredAtPush = lease.stats.heartbeats;
    // Four answered heartbeats span longer than the 400 ms lease: only heartbeats keep it. Waited
    // for by count, not by a fixed sleep (a loaded machine stretches the beat, not the promise).
    await vi.waitFor(() => expect(lease.stats.heartbeats - answeredAtPush).toBeGreaterThanOrEqual(4), { timeout: 10_000, interval: 20 });
    expect(lease.signal.reason).toBeUndefined();
    expect(lease.stats.position).toBeUndefined();
    await lease.close();
    expect(lease.signal.aborted).toBe(true);
  });

  it('queues anew on the same address after ERROR 0x01 while waiting', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => {
        if (!line.startsWith('ACQUIRE ')) return;
        if (server.connections.length === 1) {
          connection.send('WAITING 1');
          setTimeout(() => {
            connection.send('ERROR 0x01 server going away');
            connection.socket.end();
          }, 50);
        } else {
          connection.send('ACQUIRED 6');
        }
      },
    });
    const sessions = client({ addresses: [server.address] });
    const token = await sessions.hold('restart', { lease: 1000 }, ({ token }) => token);
    expect(token).toBe(6n);
    expect(server.connections.map((connection) => connection.lines[0])).toEqual(['ACQUIRE restart 1000', 'ACQUIRE restart 1000']);
  });

  it('moves to the next address after ERROR 0x01', async () => {
    const leaving = await fakeServer({
      onLine: (connection) => {
        connection.send('ERROR 0x01 server going away');
        connection.socket.end();
      },
    });
    const staying = await fakeServer(grantingScript('8'));
    const sessions = client({ addresses: [leaving.address, staying.address] });
    await expect(sessions.hold('failover', { lease: 1000 }, ({ token }) => token)).resolves.toBe(8n);
    expect(leaving.lines).toEqual(['ACQUIRE failover 1000']);
    expect(staying.lines[0]).toBe('ACQUIRE failover 1000');
  });

  it('aborts the running work on ERROR 0x01 instead of queueing anew', async () => {
    const server = await fakeServer({
      onLine: (connection, line) => {
        connection.send('ACQUIRED 3');
        if (line.startsWith('ACQUIRE ')) {
          setTimeout(() => {
            connection.send('ERROR 0x01 server going away');
            connection.socket.end();
          }, 100);
        }
      },
    });
    const sessions = client({ addresses: [server.address] });
    const outcome = await sessions.hold('busy', { lease: 1000 }, ({ signal }) => aborted(signal));
    expect(outcome.reason).toMatchObject({ code: 'server-going-away', message: 'server going away' });
    await sleep(50);
    expect(server.connections.length).toBe(1);
  });

  it('aborts the running work when the connection closes without a word', async () => {
    const server = await fakeServer({
      onLine: (connection) => {
        connection.send('ACQUIRED 3');
        setTimeout(() => connection.socket.destroy(), 50);
      },
    });
    const sessions = client({ addresses: [server.address] });
    const outcome = await sessions.hold('dropped', { lease: 1000 }, ({ signal }) => aborted(signal));
    expect(outcome.reason).toMatchObject({ code: 'connection-lost' });
  });

  it('follows REDIRECT to the named address', async () => {
    const active = await fakeServer(grantingScript('11'));
    const standby = await fakeServer({
      onLine: (connection) => {
        connection.send(`REDIRECT ${active.address}`);
        connection.socket.end();
      },
    });
    const sessions = client({ addresses: [standby.address] });
    await expect(sessions.hold('moved', { lease: 1000 }, ({ token }) => token)).resolves.toBe(11n);
    expect(active.lines[0]).toBe('ACQUIRE moved 1000');
  });

  it('gives up with LockTimeoutError when not acquired within wait, and closes the claim', async () => {
    const server = await fakeServer({ onLine: (connection) => connection.send('WAITING 1') });
    const sessions = client({ addresses: [server.address] });
    const outcome = await sessions.open('busy', { lease: 1000, wait: 200 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(outcome).toMatchObject({ key: 'busy', waitMs: 200 });
    await server.until(() => server.connections[0]?.socket.readableEnded === true || server.connections[0]?.socket.destroyed === true);
  });

  it('waits forever with wait 0, as the keyed client and baton run --wait 0 do', async () => {
    const server = await fakeServer({
      onConnect: (connection) => setTimeout(() => connection.send('ACQUIRED 21'), 200),
      onLine: (connection) => connection.send('WAITING 1'),
    });
    const sessions = client({ addresses: [server.address] });
    const lease = await sessions.open('patient', { lease: 1000, wait: 0 });
    expect(lease.token).toBe(21n);
    await lease.close();
  });

  it('refuses, before connecting, a name the server would refuse', async () => {
    const server = await fakeServer(grantingScript('1'));
    const sessions = client({ addresses: [server.address] });
    for (const name of ['a\u00a0b', 'a\u2029', '\ufeff', '\udc00x']) {
      await expect(sessions.open(name, { lease: 1000 })).rejects.toMatchObject({ code: 'bad-key' });
    }
    expect(server.connections.length).toBe(0);
  });

  it('fails with the named BatonError when an admin removes the claim from the queue', async () => {
    const server = await fakeServer({
      onLine: (connection) => {
        connection.send('ERROR 0x05 removed from queue by admin');
        connection.socket.end();
      },
    });
    const sessions = client({ addresses: [server.address] });
    await expect(sessions.open('kicked', { lease: 1000 })).rejects.toMatchObject({ code: 'kicked' });
    expect(server.connections.length).toBe(1);
  });
});
