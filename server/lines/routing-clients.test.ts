// The client library against real listeners on their routes: pointed at a standby (or at a
// node that steps down), KeyedClient and SessionClient end up served by the active node.
import { afterEach, describe, expect, it } from 'vitest';
import { BatonError } from '../../lib/errors.ts';
import { KeyedClient } from '../../lib/client/keyed-client.ts';
import { SessionClient } from '../../lib/client/session-client.ts';
import { SESSION_REFUSAL, SessionConnection } from './session-connection.ts';
import type { Route } from './routing.ts';
import { eventually } from '../testing/line-client.ts';
import { client, runKeyedTeardown, startKeyed, teardown, tokenOf } from '../testing/keyed-test-kit.ts';
import { startProtocolStack } from '../testing/protocol-stack.ts';

afterEach(runKeyedTeardown);

const here = (port: number): string => `127.0.0.1:${port}`;

/** A standby's route to the active whose keyed and session listeners are at these ports. */
function toActive(lockPort: number, sessionPort: number): Route {
  return { kind: 'redirect', lock: here(lockPort), session: here(sessionPort) };
}

async function startSessions() {
  const stack = await startProtocolStack((transport, ctx, engine) => new SessionConnection(transport, ctx, engine), SESSION_REFUSAL);
  teardown.push(stack.stop);
  return stack;
}

function keyedClient(port: number): KeyedClient {
  const keyed = new KeyedClient({ addresses: [here(port)] });
  teardown.push(() => keyed.close());
  return keyed;
}

function sessionClient(port: number): SessionClient {
  const sessions = new SessionClient({ addresses: [here(port)] });
  teardown.push(() => sessions.close());
  return sessions;
}

describe('clients and listener routes', () => {
  it('KeyedClient pointed at a standby acquires and releases at the active', async () => {
    const active = await startKeyed();
    const standby = await startKeyed();
    standby.listener.setRoute(toActive(active.port, 1));
    const keyed = keyedClient(standby.port);
    const grant = await keyed.acquire('k', { lease: 5_000, wait: 2_000 });
    expect(active.engine.lock('k')?.holder?.token).toBe(grant.token);
    expect(await grant.release()).toBe(true);
    expect(active.engine.lockCount).toBe(0);
    expect(standby.engine.lockCount).toBe(0);
  });

  it('KeyedClient re-sends a waiting acquire to the new active when its node steps down', async () => {
    const old = await startKeyed();
    const next = await startKeyed();
    const other = await client(old.port);
    other.send('A k 5 0');
    tokenOf(await other.next());
    const keyed = keyedClient(old.port);
    const pending = keyed.acquire('k', { lease: 5_000, wait: 3_000 });
    await eventually(() => old.engine.waiterCount === 1);
    old.engine.reset();
    old.listener.setRoute(toActive(next.port, 1));
    const grant = await pending;
    expect(next.engine.lock('k')?.holder?.token).toBe(grant.token);
  });

  it('SessionClient pointed at a standby holds the lock at the active', async () => {
    const active = await startSessions();
    const standby = await startSessions();
    standby.listener.setRoute(toActive(1, active.port));
    const sessions = sessionClient(standby.port);
    const token = await sessions.hold('k', { lease: 5_000, wait: 2_000 }, ({ token }) => {
      expect(active.engine.lock('k')?.holder?.token).toBe(token);
      return token;
    });
    expect(token).toBeGreaterThan(0n);
    expect(standby.engine.lockCount).toBe(0);
  });

  it('a held session whose node steps down loses the lock as server-going-away, and the next claim is held at the new active', async () => {
    const old = await startSessions();
    const next = await startSessions();
    const sessions = sessionClient(old.port);
    const lease = await sessions.open('k', { lease: 5_000 });
    const lost = new Promise<unknown>((resolve) => lease.signal.addEventListener('abort', () => resolve(lease.signal.reason), { once: true }));
    old.engine.reset();
    old.listener.setRoute(toActive(1, next.port));
    const reason = await lost;
    expect(reason).toBeInstanceOf(BatonError);
    expect((reason as BatonError).code).toBe('server-going-away');
    await lease.close();
    const again = await sessions.open('k', { lease: 5_000, wait: 2_000 });
    expect(next.engine.lock('k')?.holder?.token).toBe(again.token);
    await again.close();
  });
});
