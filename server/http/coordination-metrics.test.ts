// The coordination mode's series on /metrics: the real registry over a cluster view with and
// without the etcd mode's `coordination`, linted by promtool (server/testing/promtool.ts).
import { describe, expect, it } from 'vitest';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { ClusterView, CoordinationView } from '../../lib/ops-api/api-types.ts';
import { coordinationView, ETCD_ENDPOINTS } from '../../lib/ops-api/testing/coordination-fixture.ts';
import { sample } from '../testing/metrics-text.ts';
import { promtoolCheckMetrics } from '../testing/promtool.ts';
import type { CoordinationMode } from './coordination-metrics.ts';
import { createMetrics } from './metrics.ts';

function clusterView(coordination: CoordinationView | undefined): ClusterView {
  return {
    self: 'a',
    instanceId: 'i',
    clustered: true,
    phase: 'active',
    active: 'a',
    restore: { available: false, yielded: [] },
    nodes: [],
    handoff: { available: false, reason: null, targets: [] },
    failovers: [],
    ...(coordination === undefined ? {} : { coordination }),
  };
}

/** A cluster node's registry in `mode` whose view's coordination is whatever `coordination` holds at the scrape. */
function registry(mode: CoordinationMode | undefined, coordination: { now: CoordinationView | undefined }) {
  const f = engineFixture();
  return createMetrics(f.engine, () => ({ keyed: 0, session: 0 }), {
    role: () => 'active',
    nodeId: 'a',
    instanceId: 'i',
    cluster: () => clusterView(coordination.now),
    clusterNode: {
      peerAuthRefusals: () => 0,
      failoversRecorded: () => ({ crash: 0, signal: 0, 'api-handoff': 0, 'priority-return': 0, 'split-brain': 0 }),
      ...(mode === undefined ? {} : { coordinationMode: mode }),
    },
  });
}

const up = (endpoint: string) => `baton_etcd_endpoint_up{endpoint="${endpoint}"}`;

describe('/metrics in the etcd mode', () => {
  it('says the mode, each configured endpoint, the role, the permission left and the replies waiting, promtool-clean', async () => {
    const [e0, e1, e2] = ETCD_ENDPOINTS as [string, string, string];
    const state = {
      now: coordinationView({
        endpoints: [
          { endpoint: e0, healthy: true, lastError: null, checkedAgoMs: 100 },
          { endpoint: e1, healthy: false, lastError: 'connect ECONNREFUSED', checkedAgoMs: 100 },
          { endpoint: e2, healthy: true, lastError: null, checkedAgoMs: 100 },
        ],
        lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: 1_250 },
        repliesWaiting: 3,
      }),
    };
    const r = registry('etcd', state);
    const text = await r.metrics();
    const { code, output } = await promtoolCheckMetrics(text);
    expect(output).toBe('');
    expect(code).toBe(0);
    expect(sample(text, 'baton_coordination_mode{mode="etcd"}')).toBe(1);
    expect(sample(text, 'baton_coordination_mode{mode="peers"}')).toBe(0);
    expect([sample(text, up(e0)), sample(text, up(e1)), sample(text, up(e2))]).toEqual([1, 0, 1]);
    expect(sample(text, 'baton_etcd_role_holder')).toBe(1);
    expect(sample(text, 'baton_etcd_grant_permission_remaining_seconds')).toBe(1.25);
    expect(sample(text, 'baton_etcd_grants_blocked')).toBe(0);
    expect(sample(text, 'baton_reply_gate_waiting')).toBe(3);

    // Quorum lost: the permission runs out and the node says it is blocked; a standby holds nothing.
    state.now = coordinationView({ blocked: 'etcd quorum lost', lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: null } });
    const blocked = await r.metrics();
    expect(sample(blocked, 'baton_etcd_grants_blocked')).toBe(1);
    expect(sample(blocked, 'baton_etcd_grant_permission_remaining_seconds')).toBe(0);
    state.now = coordinationView({ holding: false, holder: 'b', lease: { id: null, ttlMs: 2_000, grantRemainingMs: null } });
    expect(sample(await r.metrics(), 'baton_etcd_role_holder')).toBe(0);
  });

  it('exports an endpoint series only for the endpoints the view lists (the configured ones)', async () => {
    const state = { now: coordinationView({ endpoints: [{ endpoint: 'http://only:2379', healthy: true, lastError: null, checkedAgoMs: 1 }] }) };
    const text = await registry('etcd', state).metrics();
    expect(text.split('\n').filter((l) => l.startsWith('baton_etcd_endpoint_up{'))).toEqual(['baton_etcd_endpoint_up{endpoint="http://only:2379"} 1']);
  });
});

describe('/metrics in the peers mode', () => {
  it('says the mode and exports no etcd series', async () => {
    for (const mode of ['peers', undefined] as const) {
      const text = await registry(mode, { now: undefined }).metrics();
      expect(sample(text, 'baton_coordination_mode{mode="peers"}')).toBe(1);
      expect(sample(text, 'baton_coordination_mode{mode="etcd"}')).toBe(0);
      expect(text).not.toMatch(/^baton_(etcd_|reply_gate)/m);
    }
  });
});
