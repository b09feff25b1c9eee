// The coordination mode's series on /metrics (cluster nodes only), read at scrape time from the
// cluster view's `coordination` (the etcd mode, docs/cluster.md "Two modes"). Every node says its
// mode; only a node in the etcd mode exports the etcd series (a label-less gauge cannot be left out
// at a scrape: a peers-mode node would read "does not hold the role" and "0 s of permission left",
// which it has no notion of). Endpoint labels are the configured endpoints only: the view lists
// exactly those, so the series are as bounded as the flag.
import { Gauge, type Registry } from 'prom-client';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';

export type CoordinationMode = 'peers' | 'etcd';
const MODES: readonly CoordinationMode[] = ['peers', 'etcd'];

export function registerCoordinationMetrics(registry: Registry, view: () => ClusterView, mode: CoordinationMode): void {
  new Gauge({
    name: 'baton_coordination_mode',
    help: 'How this node decides who is active: 1 for its mode (peers: heartbeats between the nodes; etcd: a lease on an etcd key, partition-safe), 0 for the other',
    labelNames: ['mode'] as const,
    registers: [registry],
    collect() {
      for (const m of MODES) this.set({ mode: m }, m === mode ? 1 : 0);
    },
  });
  if (mode === 'etcd') etcdGauges(registry, () => view().coordination);
}

function etcdGauges(registry: Registry, coordination: () => ClusterView['coordination']): void {
  new Gauge({
    name: 'baton_etcd_endpoint_up',
    help: 'Whether each configured etcd endpoint answered its last status call with a raft leader (1) or not (0), as this node probes it every 2 s',
    labelNames: ['endpoint'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const e of coordination()?.endpoints ?? []) this.set({ endpoint: e.endpoint }, e.healthy ? 1 : 0);
    },
  });
  new Gauge({
    name: 'baton_etcd_role_holder',
    help: 'Whether this node holds the active role key in etcd under its own lease (1) or not (0)',
    registers: [registry],
    collect() {
      this.set(coordination()?.holding === true ? 1 : 0);
    },
  });
  new Gauge({
    name: 'baton_etcd_grant_permission_remaining_seconds',
    help: "How long this node may still grant without another answered keep-alive (its etcd lease's TTL from the last one's send time, less the margins); 0 when it does not hold the role or the permission lapsed",
    registers: [registry],
    collect() {
      this.set(Math.max(0, coordination()?.lease.grantRemainingMs ?? 0) / 1000);
    },
  });
  new Gauge({
    name: 'baton_etcd_grants_blocked',
    help: 'Whether this node, active by etcd, may not grant now (1): etcd unreachable, quorum lost or its lease lapsed; /readyz and the console say why',
    registers: [registry],
    collect() {
      this.set((coordination()?.blocked ?? null) === null ? 0 : 1);
    },
  });
  new Gauge({
    name: 'baton_reply_gate_waiting',
    help: 'On the active: turns of replies held until every in-sync standby has applied them',
    registers: [registry],
    collect() {
      this.set(coordination()?.repliesWaiting ?? 0);
    },
  });
}
