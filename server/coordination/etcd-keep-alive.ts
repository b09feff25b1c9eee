// One lease keep-alive round trip, on a stream of its own. etcd's keep-alive is a bidirectional
// stream; a stream per round costs one HTTP/2 stream on the channel that is already open, and
// means a reply can only be the answer to this round's request, so the caller's "sent at" time is
// the right one for it (grant-permission.ts). etcd3's own Lease keeps one stream and stamps each
// reply with Date.now() when it arrives, which is the bound the permission rule must not use.
import type { Etcd3 } from 'etcd3';

export class KeepAliveTimeout extends Error {
  constructor(ms: number) {
    super(`etcd lease keep-alive not answered within ${ms} ms`);
    this.name = 'KeepAliveTimeout';
  }
}

/** Sends one keep-alive for `leaseId` and resolves with the TTL etcd answered (s; 0 or less: the lease is gone). */
export async function keepAliveOnce(client: Etcd3, leaseId: string, timeoutMs: number): Promise<number> {
  const stream = await client.leaseClient.leaseKeepAlive({ deadline: Date.now() + timeoutMs });
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.cancel();
      reject(new KeepAliveTimeout(timeoutMs));
    }, timeoutMs);
    stream.on('data', (res) => {
      clearTimeout(timer);
      stream.end();
      resolve(Number(res.TTL));
    });
    stream.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    stream.write({ ID: leaseId });
  });
}
