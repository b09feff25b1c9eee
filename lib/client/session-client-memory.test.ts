// SessionClient over the in-memory connector, on a fake clock: its heartbeat schedule, its silence
// deadline and its resume to the millisecond, with no socket and no real waiting. The same
// behaviours over real TCP are in session-client.test.ts and session-resume-client.test.ts.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatonError } from '../errors.ts';
import { SessionClient } from './session-client.ts';
import type { SessionClientOptions } from './session-client.ts';
import type { SessionStats } from './session-client-connection.ts';
import { MemoryConnector } from './testing/memory-connector.ts';
import type { MemoryScript } from './testing/memory-connector.ts';

const NODE_A = '10.0.0.1:7071';
const NODE_B = '10.0.0.2:7071';

let net: MemoryConnector;
let clients: SessionClient[];
let startedAt: number;

beforeEach(() => {
  // performance.now() too: the client times its heartbeats and its silence deadline with it.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance', 'Date'] });
  net = new MemoryConnector();
  clients = [];
  startedAt = performance.now();
});

afterEach(async () => {
  const closing = Promise.all(clients.map((c) => c.close()));
  await vi.runAllTimersAsync();
  await closing;
  vi.useRealTimers();
});

function client(options: SessionClientOptions): SessionClient {
  const sessions = new SessionClient({ clientName: null, resumable: false, ...options }, net);
  clients.push(sessions);
  return sessions;
}

/** Milliseconds on the fake clock since the test began. */
const elapsed = (): number => performance.now() - startedAt;

/** Answers ACQUIRE at once and each HEARTBEAT after `rttMs` with `ACQUIRED <token>`; records when each HEARTBEAT arrived. */
function holding(token: string, rttMs: number, heartbeatsAt: number[]): MemoryScript {
  return {
    onLine: (connection, line) => {
      if (line !== 'HEARTBEAT') return connection.send(`ACQUIRED ${token}`);
      heartbeatsAt.push(elapsed());
      if (rttMs === 0) connection.send(`ACQUIRED ${token}`);
      else setTimeout(() => connection.send(`ACQUIRED ${token}`), rttMs);
    },
  };
}

describe('SessionClient in memory', () => {
  it('heartbeats every lease/4 while the server answers at once', async () => {
    const heartbeatsAt: number[] = [];
    net.listen(NODE_A, holding('7', 0, heartbeatsAt));
    const lease = await client({ addresses: [NODE_A] }).open('jobs', { lease: 1000 });
    expect(lease.token).toBe(7n);
    await vi.advanceTimersByTimeAsync(1000);
    expect(heartbeatsAt).toEqual([250, 500, 750, 1000]);
    expect(lease.signal.aborted).toBe(false);
  });

  it('takes twice the smoothed round trip off the gap, from the first answered heartbeat on', async () => {
    const heartbeatsAt: number[] = [];
    const seen: SessionStats[] = [];
    net.listen(NODE_A, holding('7', 40, heartbeatsAt));
    await client({ addresses: [NODE_A] }).open('jobs', { lease: 1000, onHeartbeat: (stats) => seen.push(stats) });
    await vi.advanceTimersByTimeAsync(800); // the fourth answer comes at 760 + 40
    // 250 - 2 x 40 = 170 ms between sends once the first round trip is known.
    expect(heartbeatsAt).toEqual([250, 420, 590, 760]);
    expect(seen.map((stats) => [stats.lastRtt, stats.smoothedRtt, stats.heartbeatInterval])).toEqual([
      [40, 40, 170],
      [40, 40, 170],
      [40, 40, 170],
      [40, 40, 170],
    ]);
  });

  it('aborts the signal at exactly 0.8 x lease after the last answered request was sent, with one heartbeat in flight at most', async () => {
    const server = net.listen(NODE_A, { onLine: (connection, line) => line.startsWith('ACQUIRE ') && connection.send('ACQUIRED 3') });
    const lease = await client({ addresses: [NODE_A] }).open('jobs', { lease: 1000 });
    await vi.advanceTimersByTimeAsync(799);
    expect(lease.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(BatonError);
    expect(lease.signal.reason).toMatchObject({ code: 'lease-expired' });
    expect(server.lines).toEqual(['ACQUIRE jobs 1000', 'HEARTBEAT']);
    expect(server.connections[0]?.closed).toBe(true);
  });

  it('after a pass over every address found no server, waits 200 ms before the next, until reconnectFor runs out', async () => {
    const opening = client({ addresses: [NODE_A, NODE_B], reconnectFor: 1000 }).open('jobs', { lease: 1000 });
    let failure: unknown;
    opening.catch((error: unknown) => {
      failure = error;
    });
    await vi.advanceTimersByTimeAsync(199);
    expect(net.dials).toEqual([NODE_A, NODE_B]);
    await vi.advanceTimersByTimeAsync(1);
    expect(net.dials).toEqual([NODE_A, NODE_B, NODE_A, NODE_B]);
    await vi.advanceTimersByTimeAsync(799);
    expect(net.dials).toHaveLength(10); // passes at 0, 200, 400, 600 and 800 ms
    expect(failure).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    // At 1000 ms the first refusal of the next pass is 1000 ms (reconnectFor) past the start: it gives up.
    expect(net.dials).toHaveLength(11);
    expect(failure).toMatchObject({ message: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('on MOVED takes the claim up at the named node with RESUME and the same key, and heartbeats there', async () => {
    const heartbeatsAtB: number[] = [];
    const a = net.listen(NODE_A, {
      onLine: (connection, line) => {
        if (!line.startsWith('ACQUIRE ')) return;
        connection.send('ACQUIRED 9');
        setTimeout(() => connection.send(`MOVED ${NODE_B}`), 100);
      },
    });
    const b = net.listen(NODE_B, holding('9', 0, heartbeatsAtB));
    const lease = await client({ addresses: [NODE_A, NODE_B], resumable: true }).open('jobs', { lease: 1000 });
    await vi.advanceTimersByTimeAsync(600);
    const key = a.lines[0]?.split(' ')[3];
    expect(key).toMatch(/^[0-9a-f]{32,64}$/);
    expect(b.lines[0]).toBe(`RESUME jobs ${key}`);
    // The schedule goes on from the last send (the RESUME at 100 ms): 350, 600.
    expect(heartbeatsAtB).toEqual([350, 600]);
    expect(a.connections[0]?.closed).toBe(true);
    expect(lease.signal.aborted).toBe(false);
  });
});
