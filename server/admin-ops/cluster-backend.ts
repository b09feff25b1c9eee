// What the ops side needs from the cluster: the view (peers, roles, failovers) and the admin
// operations, which a standby forwards to the active node. A node started without --config is
// a cluster of one (single-node-cluster.ts); a clustered node uses the peer runtime (server/cluster).
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import type { AdminFacade } from '../../lib/ops-api/daemon-facade.ts';

export interface ClusterBackend extends AdminFacade {
  view(): ClusterView;
}
