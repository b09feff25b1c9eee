// The client library against the real daemon, in process: both clients, both protocols, one
// lock table. The fake-server tests next door pin the wire details; these pin the behaviour a
// user sees when the two ends are the real ones.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Daemon } from '../../server/daemon/daemon.ts';
import { KeyedClient, LockTimeoutError, SessionClient } from './index.ts';
import type { KeyedClientOptions, KeyedGrant, SessionClientOptions } from './index.ts';
import { daemonKit } from '../../server/testing/daemon-kit.ts';

const kit = daemonKit();
const { daemon } = kit;

function keyedClient(port: number, options: KeyedClientOptions = {}): KeyedClient {
  const client = new KeyedClient({ addresses: [`127.0.0.1:${port}`], ...options });
  kit.defer(() => client.close());
  return client;
}

function sessionClient(d: Daemon, options: SessionClientOptions = {}): SessionClient {
  const client = new SessionClient({ addresses: [`127.0.0.1:${d.sessionAddress.port}`], ...options });
  kit.defer(() => client.close());
  return client;
}

/** Waits (on the real clock, bounded) until the engine has `count` waiters queued. */
async function waiters(d: Daemon, count: number): Promise<void> {
  const deadline = performance.now() + 3_000;
  while (d.engine.waiterCount !== count) {
    if (performance.now() > deadline) throw new Error(`expected ${count} waiters, have ${d.engine.waiterCount}`);
    await sleep(5);
  }
}

/** A TCP relay in front of the daemon that a test can make swallow bytes or cut. */
async function relay(port: number): Promise<{ port: number; swallow: boolean; swallowed: string; cut(): void }> {
  const sockets = new Set<net.Socket>();
  const state = {
    port: 0,
    swallow: false,
    swallowed: '',
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk) => {
      if (state.swallow) state.swallowed += chunk.toString();
      else upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  kit.defer(() => {
    state.cut();
    return new Promise((resolve) => server.close(resolve));
  });
  return state;
}

describe('KeyedClient against the daemon', () => {
  it('acquires, releases, and gets STALE for a token that no longer holds', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    const grant = await keyed.acquire('jobs/a', { lease: 5_000 });
    expect(d.engine.lock('jobs/a')?.holder?.token).toBe(grant.token);
    await expect(grant.release()).resolves.toBe(true);
    await expect(keyed.release('jobs/a', grant.token)).resolves.toBe(false);
    expect(d.engine.lockCount).toBe(0);
  });

  it('withLock runs the work under the lock and releases afterwards', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    const result = await keyed.withLock('jobs/b', { lease: 5_000 }, (grant) => {
      expect(d.engine.lock('jobs/b')?.holder?.token).toBe(grant.token);
      return 'done';
    });
    expect(result).toBe('done');
    expect(d.engine.lockCount).toBe(0);
  });

  it('pipelines acquires on many keys and gets a distinct token for each', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    const keys = Array.from({ length: 300 }, (_, i) => `many/${i}`);
    const grants = await Promise.all(keys.map((key) => keyed.acquire(key, { lease: 5_000 })));
    expect(grants.map((grant) => grant.key)).toEqual(keys);
    expect(new Set(grants.map((grant) => grant.token)).size).toBe(keys.length);
    expect(d.engine.heldCount).toBe(keys.length);
    expect(await Promise.all(grants.map((grant) => grant.release()))).toEqual(keys.map(() => true));
  });

  it('hands a contended key over in FIFO order with increasing tokens', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    const holder = await keyed.acquire('hot', { lease: 5_000 });
    const order: number[] = [];
    const tokens: bigint[] = [holder.token];
    const done: Promise<void>[] = [];
    for (let i = 0; i < 5; i++) {
      done.push(
        keyed.acquire('hot', { lease: 5_000 }).then(async (grant) => {
          order.push(i);
          tokens.push(grant.token);
          await grant.release();
        }),
      );
      await waiters(d, i + 1); // queued before the next one asks
    }
    await holder.release();
    await Promise.all(done);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(tokens).toEqual([...tokens].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(tokens).size).toBe(6);
  });

  it('rejects with LockTimeoutError when the key stays held for the whole wait', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    await keyed.acquire('busy', { lease: 5_000 });
    const startedAt = performance.now();
    const outcome = await keyed.acquire('busy', { lease: 5_000, wait: 200 }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockTimeoutError);
    expect(outcome).toMatchObject({ code: 'lock-timeout', key: 'busy', waitMs: 200 });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(190);
    expect(d.engine.waiterCount).toBe(0);
  });

  it('retries a release whose connection was destroyed, and the release lands', async () => {
    const d = await daemon();
    const cable = await relay(d.lockAddress.port);
    const keyed = keyedClient(cable.port, { reconnectInterval: 50, releaseRetryInterval: 50 });
    const grant = await keyed.acquire('fragile', { lease: 10_000 });
    cable.swallow = true;
    const released = grant.release();
    await eventuallyTrue(() => cable.swallowed.includes(`R fragile ${grant.token}`));
    expect(d.engine.lock('fragile')?.holder?.token).toBe(grant.token); // the first try never arrived
    cable.swallow = false;
    cable.cut();
    await expect(released).resolves.toBe(true);
    expect(d.engine.lockCount).toBe(0);
  });
});

describe('SessionClient against the daemon', () => {
  it('pushes the grant to a queued second client the moment the first one closes', async () => {
    const d = await daemon();
    const first = await sessionClient(d).open('nightly', { lease: 2_000 });
    const positions: number[] = [];
    const second = sessionClient(d).open('nightly', { lease: 2_000, onWaiting: (position) => positions.push(position) });
    await waiters(d, 1);
    await first.close();
    const lease = await second;
    expect(positions[0]).toBe(1);
    expect(lease.token).toBeGreaterThan(first.token);
    expect(d.engine.lock('nightly')?.holder?.token).toBe(lease.token);
    await lease.close();
  });

  it('keeps holding across heartbeats while the work runs', async () => {
    const d = await daemon();
    let heartbeats = 0;
    const sessions = sessionClient(d, { minHeartbeatInterval: 20 });
    const token = await sessions.hold('long', { lease: 200, onHeartbeat: () => heartbeats++ }, async ({ signal, token }) => {
      await sleep(500); // more than two leases
      expect(signal.aborted).toBe(false);
      return token;
    });
    expect(heartbeats).toBeGreaterThanOrEqual(4);
    expect(token).toBeGreaterThan(0n);
    expect(d.engine.lockCount).toBe(0);
  });

  it('aborts the held signal with server-going-away when the daemon shuts down', async () => {
    const d = await daemon();
    const lease = await sessionClient(d).open('drained', { lease: 5_000 });
    await d.shutdown();
    await eventuallyTrue(() => lease.signal.aborted);
    expect(lease.signal.reason).toMatchObject({ code: 'server-going-away' });
  });

  it('aborts the held signal with force-released when an admin takes the lock', async () => {
    const d = await daemon();
    const lease = await sessionClient(d).open('taken', { lease: 5_000 });
    expect(d.engine.forceRelease('taken')).toMatchObject({ ok: true, token: lease.token });
    await eventuallyTrue(() => lease.signal.aborted);
    expect(lease.signal.reason).toMatchObject({ code: 'force-released' });
  });
});

describe('keyed and session clients on one lock', () => {
  it('stand in one FIFO queue', async () => {
    const d = await daemon();
    const keyed = keyedClient(d.lockAddress.port);
    const sessions = sessionClient(d);
    const order: string[] = [];
    const holder = await keyed.acquire('shared', { lease: 5_000 });
    const session = sessions.open('shared', { lease: 2_000 }).then((lease) => {
      order.push('session');
      return lease;
    });
    await waiters(d, 1);
    const keyedWaiter = keyed.acquire('shared', { lease: 5_000 }).then((grant: KeyedGrant) => {
      order.push('keyed');
      return grant;
    });
    await waiters(d, 2);
    await holder.release();
    const lease = await session;
    await sleep(50);
    expect(order).toEqual(['session']); // the keyed waiter is still behind the session
    await lease.close();
    const grant = await keyedWaiter;
    expect(order).toEqual(['session', 'keyed']);
    expect(holder.token < lease.token && lease.token < grant.token).toBe(true);
    await grant.release();
  });
});

async function eventuallyTrue(ready: () => boolean, ms = 3_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(5);
  }
}
