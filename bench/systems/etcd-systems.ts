// etcd through the etcd3 package (one Etcd3 client, so one gRPC channel, per client):
//   - etcd3's Lock: grants a lease (and, as the package does for every lease, opens its
//     keep-alive stream), puts the key under it if absent (a txn), and revokes the lease to
//     release. It does not wait: a held key fails at once. Used for the uncontended pairs.
//   - etcd3's Election (the Go client's recipe): a campaign puts a key under a fresh lease in
//     the election's prefix and watches the key created just before it until that one is
//     deleted; resigning revokes the lease. Used as the waiting lock for the contended handover.
import { Etcd3 } from 'etcd3';
import { LEASE_MS, type LockClient, type LockSystem } from './lock-system.ts';

const LEASE_S = Math.round(LEASE_MS / 1000);

export function etcdLock(endpoint: string, serverCpuMs: () => number): LockSystem {
  return {
    name: 'etcd 3.4 (etcd3 Lock)',
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const client = new Etcd3({ hosts: endpoint });
      return {
        acquire: async (key) => {
          const lock = await client.lock(key).ttl(LEASE_S).acquire();
          return { release: () => lock.release() };
        },
        close: async () => client.close(),
      };
    },
  };
}

export function etcdElection(endpoint: string, serverCpuMs: () => number): LockSystem {
  return {
    name: 'etcd 3.4 (etcd3 Election: watch on the previous key)',
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const client = new Etcd3({ hosts: endpoint });
      return {
        acquire: async (key) => {
          const campaign = client.election(key, LEASE_S).campaign('bench');
          await campaign.wait();
          return { release: () => campaign.resign() };
        },
        close: async () => client.close(),
      };
    },
  };
}
