// The cluster as a single node sees it: itself, active, priority 0, and no standby to hand off
// to. The cluster issue replaces this with the peer table; the ops API and the dashboard
// already read the same shapes, so they only gain data.
import type { ClusterView } from '../../lib/ops/api-types.ts';
import type { HandoffResult } from '../daemon-facade.ts';

export const SINGLE_NODE_HANDOFF_REASON = 'this node is the only one in the cluster: there is no standby to hand off to';

export interface NodeAddresses {
  lock: string;
  session: string;
  http: string;
}

export class SingleNodeCluster {
  constructor(
    private readonly nodeId: string,
    private readonly instanceId: string,
    private readonly addresses: () => NodeAddresses,
  ) {}

  view(): ClusterView {
    const a = this.addresses();
    return {
      self: this.nodeId,
      instanceId: this.instanceId,
      nodes: [
        {
          id: this.nodeId, role: 'active', priority: 0, self: true, alive: true, lastSeen: Date.now(), replicationLag: null,
          lockAddress: a.lock, sessionAddress: a.session, httpAddress: a.http,
        },
      ],
      handoff: { available: false, reason: SINGLE_NODE_HANDOFF_REASON, targets: [] },
      failovers: [],
    };
  }

  async handoff(_target: string | null): Promise<HandoffResult> {
    return { ok: false, reason: SINGLE_NODE_HANDOFF_REASON };
  }
}
