// The cluster's series on /metrics, read at scrape time from the cluster view
// (server/cluster/cluster-view.ts), labelled by node id (the nodes of cluster.json: a bounded
// set), plus two counters a cluster node keeps: peer links refused for authentication, and the
// failovers it recorded. Gauges reset at each scrape, so a node that left the view, or a standby
// that was promoted, loses its series.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { FAILOVER_CAUSES, type FailoverCause } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import { type CoordinationMode, registerCoordinationMetrics } from './coordination-metrics.ts';

/**
 * What only a cluster node has, beside its view. Given by a cluster node only: with it the
 * series that only a cluster node has are exported (a label-less gauge cannot be left out at a
 * scrape: it would read 0, a priority the node does not have).
 */
export interface ClusterNodeSources {
  /** Peer connections refused because a side failed authentication (PeerMesh.authRefusals). */
  peerAuthRefusals(): number;
  /** Failovers this node recorded since it started, by cause (FailoverTimeline.recorded). */
  failoversRecorded(): Readonly<Record<FailoverCause, number>>;
  /** Claims by fate over the transitions this node recorded, counted when each finished (FailoverTimeline.fates). */
  claimFates?(): Readonly<Record<string, number>>;
  /** Calls `listener` with each client stall (ms) the node measures, and its transition's cause (FailoverTimeline.stallListeners). */
  onClientStall?(listener: (cause: FailoverCause, ms: number) => void): void;
  /** `--coordination`: with 'etcd' the etcd series are exported (coordination-metrics.ts); 'peers' if not given. */
  coordinationMode?: CoordinationMode;
}

/** Buckets of baton_failover_client_stall_seconds: a handoff's few ms to a lease that had to run out. */
const STALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function registerClusterMetrics(registry: Registry, view: () => ClusterView, node?: ClusterNodeSources): void {
  clusterGauges(registry, view);
  if (node === undefined) return;
  standbyGauges(registry, view);
  registerCoordinationMetrics(registry, view, node.coordinationMode ?? 'peers');
  new Counter({
    name: 'baton_peer_auth_refused_total',
    help: 'Peer connections refused because they failed authentication, either way (this node refused a peer, or a peer refused this node): the admin tokens differ',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(node.peerAuthRefusals());
    },
  });
  new Counter({
    name: 'baton_failovers_recorded_total',
    help: 'Failovers this node recorded since it started, by cause: the node that took over records each (the one that stayed active, a split brain); sum over the nodes for the cluster',
    labelNames: ['cause'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const recorded = node.failoversRecorded();
      for (const cause of FAILOVER_CAUSES) this.inc({ cause }, recorded[cause]);
    },
  });
  transitionMetrics(registry, node);
}

/** What the clients went through in the handoffs and failovers this node recorded (failover-timeline.ts). */
function transitionMetrics(registry: Registry, node: ClusterNodeSources): void {
  const stall = new Histogram({
    name: 'baton_failover_client_stall_seconds',
    help: "Each client stall of a handoff or failover this node took over in: from the old active's last grant-capable moment to the claim's RESUME, or a re-sent keyed request's grant",
    labelNames: ['cause'] as const,
    buckets: STALL_BUCKETS,
    registers: [registry],
  });
  for (const cause of FAILOVER_CAUSES) stall.zero({ cause });
  node.onClientStall?.((cause, ms) => stall.observe({ cause }, ms / 1000));
  const fates = node.claimFates;
  if (fates === undefined) return;
  new Counter({
    name: 'baton_failover_claims_total',
    help: 'Claims of the handoffs and failovers this node took over in, by fate (moved, expired, lost, ended, requeued, regranted), counted when each transition finished',
    labelNames: ['fate'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [fate, n] of Object.entries(fates())) this.inc({ fate }, n);
    },
  });
}

/**
 * What the alerts on standbys read: this node's priority (cluster nodes only), and on the
 * active, whether each other node is its in-sync standby.
 */
function standbyGauges(registry: Registry, cluster: () => ClusterView): void {
  new Gauge({
    name: 'baton_node_priority',
    help: "This node's priority: its place in cluster.json's peers (0 = highest); cluster nodes only",
    registers: [registry],
    collect() {
      this.set(cluster().nodes.find((n) => n.self)?.priority ?? 0);
    },
  });
  new Gauge({
    name: 'baton_peer_in_sync',
    help: 'On the active node: 1 when the node is its in-sync standby, else 0 (dead, re-syncing, or following another active); every other node of the cluster',
    labelNames: ['node'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const view = cluster();
      if (!view.clustered || view.phase !== 'active') return;
      for (const n of view.nodes) if (!n.self) this.set({ node: n.id }, n.alive && n.inSync && n.role === 'standby' ? 1 : 0);
    },
  });
}

/**
 * Peers, replication lag and failovers from the cluster view. Gauges reset at each scrape: a
 * node's lag series exists only while it is a standby with a known lag.
 */
function clusterGauges(registry: Registry, cluster: () => ClusterView): void {
  new Gauge({
    name: 'baton_peer_up',
    help: 'Whether this node sees the node alive (1) or not (0), for every node of the cluster, itself included',
    labelNames: ['node'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const n of cluster().nodes) this.set({ node: n.id }, n.alive ? 1 : 0);
    },
  });
  const lag = (name: string, help: string, read: (l: { events: number; ms: number }) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['node'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const n of cluster().nodes) if (n.replicationLag !== null) this.set({ node: n.id }, read(n.replicationLag));
      },
    });
  };
  lag('baton_replication_lag_events', 'Engine events the standby has not acknowledged yet, for standbys with a known lag', (l) => l.events);
  lag('baton_replication_lag_seconds', 'Age of the oldest event the standby has not acknowledged, for standbys with a known lag', (l) => l.ms / 1000);
  new Gauge({
    name: 'baton_failovers',
    help: "Failovers in the cluster view's retained list, by cause (a gauge: old entries leave the list, so it can go down)",
    labelNames: ['cause'] as const,
    registers: [registry],
    collect() {
      // Every cause, so each series exists (at 0) from the first scrape.
      const counts = new Map<FailoverCause, number>(FAILOVER_CAUSES.map((c) => [c, 0]));
      for (const f of cluster().failovers) counts.set(f.cause, (counts.get(f.cause) ?? 0) + 1);
      for (const [cause, n] of counts) this.set({ cause }, n);
    },
  });
}
