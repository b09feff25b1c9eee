// Baton through its own client library: KeyedClient (keyed protocol, explicit release, writes
// batched per tick: the pipelined client) and SessionClient (session protocol: one connection
// per claim, closing releases; the protocol has no release message and no second ACQUIRE on a
// connection, so every pair is a new connection, as for any real session client).
import { KeyedClient, SessionClient } from '../../lib/client/index.ts';
import { LEASE_MS, type LockClient, type LockSystem } from './lock-system.ts';

/**
 * `label`: which build, when two run side by side (`npm run bench -- --baseline <bin>`).
 * `clientName`: what the client names itself; null sends no identity line, for a baseline build
 * older than client identities (which would refuse `CLIENT` before `ACQUIRE`).
 */
export function batonKeyed(lockPort: number, serverCpuMs: () => number, label = '', clientName?: string | null): LockSystem {
  return {
    name: `Baton keyed (KeyedClient)${label}`,
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const client = new KeyedClient({ addresses: [`127.0.0.1:${lockPort}`], ...(clientName === undefined ? {} : { clientName }) });
      return {
        acquire: async (key) => {
          const grant = await client.acquire(key, { lease: LEASE_MS });
          return { release: async () => void (await grant.release()) };
        },
        close: () => client.close(),
      };
    },
  };
}

export function batonSession(sessionPort: number, serverCpuMs: () => number, label = '', clientName?: string | null): LockSystem {
  return {
    name: `Baton session (SessionClient)${label}`,
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const client = new SessionClient({ addresses: [`127.0.0.1:${sessionPort}`], ...(clientName === undefined ? {} : { clientName }) });
      return {
        acquire: async (key) => {
          const lease = await client.open(key, { lease: LEASE_MS });
          return { release: () => lease.close() };
        },
        close: () => client.close(),
      };
    },
  };
}
