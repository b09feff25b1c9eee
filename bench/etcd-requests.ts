// What Baton asks of etcd, read from etcd's own /metrics on every member: the gRPC messages each
// member received, by method (a unary call is one message; a keep-alive stream counts each
// keep-alive), and the raft proposals committed (each write Baton makes: role key, in-sync set,
// token ceiling, lease grants). Two readings give the rates over the time between them.
import type { EtcdCluster } from '../server/testing/etcd-cluster.ts';

export interface EtcdCounters {
  at: number;
  /** gRPC messages received, summed over the members, by method (only methods with any). */
  messages: Record<string, number>;
  /** Raft proposals committed (the highest any member reports: each member counts the same log). */
  proposals: number;
}

const MESSAGE = /^grpc_server_msg_received_total\{grpc_method="([^"]+)",[^}]*\} (\d+(?:\.\d+)?(?:e\+?\d+)?)$/;
const PROPOSALS = /^etcd_server_proposals_committed_total (\d+(?:\.\d+)?(?:e\+?\d+)?)$/;

export async function readEtcdCounters(etcd: EtcdCluster): Promise<EtcdCounters> {
  const messages: Record<string, number> = {};
  let proposals = 0;
  for (const [i, m] of etcd.members.entries()) {
    if (!etcd.isRunning(i)) continue;
    const text = await fetch(`${m.clientUrl}/metrics`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text());
    for (const line of text.split('\n')) {
      const msg = MESSAGE.exec(line);
      if (msg !== null) {
        const n = Number(msg[2]);
        if (n > 0) messages[msg[1] as string] = (messages[msg[1] as string] ?? 0) + n;
        continue;
      }
      const prop = PROPOSALS.exec(line);
      if (prop !== null) proposals = Math.max(proposals, Number(prop[1]));
    }
  }
  return { at: performance.now(), messages, proposals };
}

export interface EtcdRates {
  /** gRPC messages per second over all members, and per method. */
  requestsPerSec: number;
  byMethod: Record<string, number>;
  proposalsPerSec: number;
}

export function etcdRates(before: EtcdCounters, after: EtcdCounters): EtcdRates {
  const seconds = (after.at - before.at) / 1_000;
  const byMethod: Record<string, number> = {};
  let total = 0;
  for (const [method, n] of Object.entries(after.messages)) {
    const d = n - (before.messages[method] ?? 0);
    if (d <= 0) continue;
    byMethod[method] = Number((d / seconds).toFixed(2));
    total += d;
  }
  return {
    requestsPerSec: Number((total / seconds).toFixed(2)),
    byMethod,
    proposalsPerSec: Number(((after.proposals - before.proposals) / seconds).toFixed(2)),
  };
}
