// The cluster as a node started without --config sees it: itself, active, priority 0, no
// standby to hand off to and nothing to restore. Admin ops run here on the local engine; a
// clustered node uses the peer runtime (server/cluster) behind the same ClusterBackend.
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import type { AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';
import type { LocalLockOps } from './admin-ops.ts';
import type { ClusterBackend } from './cluster-backend.ts';

export const SINGLE_NODE_HANDOFF_REASON = 'this node is the only one in the cluster: there is no standby to hand off to';
export const SINGLE_NODE_RESTORE_REASON = 'this node is not part of a cluster: nothing to restore';

export interface NodeAddresses {
  lock: string;
  session: string;
  http: string;
}

export interface SingleNodeClusterOptions {
  nodeId: string;
  instanceId: string;
  addresses: () => NodeAddresses;
  /** Runs force-release and kick on this node's engine (and wakes its timer: admin-ops.ts). */
  lockOps: LocalLockOps;
}

export class SingleNodeCluster implements ClusterBackend {
  constructor(private readonly o: SingleNodeClusterOptions) {}

  view(): ClusterView {
    const a = this.o.addresses();
    return {
      self: this.o.nodeId,
      instanceId: this.o.instanceId,
      clustered: false,
      phase: 'active',
      active: this.o.nodeId,
      restore: { available: false, yielded: [] },
      nodes: [
        {
          id: this.o.nodeId,
          role: 'active',
          priority: 0,
          self: true,
          alive: true,
          lastSeen: Date.now(),
          replicationLag: null,
          inSync: true,
          yielded: false,
          lockAddress: a.lock,
          sessionAddress: a.session,
          httpAddress: a.http,
        },
      ],
      handoff: { available: false, reason: SINGLE_NODE_HANDOFF_REASON, targets: [] },
      failovers: [],
    };
  }

  async run(op: AdminOp, _who: string): Promise<AdminResult> {
    switch (op.op) {
      case 'force-release':
      case 'kick':
      case 'release-client':
        return this.o.lockOps.run(op);
      case 'handoff':
        return { ok: false, error: 'conflict', detail: SINGLE_NODE_HANDOFF_REASON };
      case 'restore':
        return { ok: false, error: 'conflict', detail: SINGLE_NODE_RESTORE_REASON };
    }
  }
}
