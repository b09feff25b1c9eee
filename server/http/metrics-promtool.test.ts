// /metrics as Prometheus sees it: the real registry over a real engine, linted by promtool
// (server/testing/promtool.ts finds it; without it these tests fail rather than skip).
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import type { NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ClusterView, NodeView } from '../../lib/ops-api/api-types.ts';
import { promtoolCheckMetrics as promtoolCheck } from '../testing/promtool.ts';
import { createMetrics } from './metrics.ts';
import { sample } from '../testing/metrics-text.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

/** A busy little engine: every handover cause, both protocols, holders and waiters. */
function busyEngine() {
  const f = engineFixture({ blockSize: 100n });
  let role: NodeRole = 'active';
  const registry = createMetrics(f.engine, () => ({ keyed: 3, session: 2 }), {
    role: () => role,
    nodeId: 'node-a',
    instanceId: 'inst-1',
    eventStreams: () => 4,
    audit: () => ({ file: 'unwritable', pending: 3, dropped: 1, error: 'ENOSPC' }),
    engineNow: () => f.clock.now(),
    tokensRemaining: () => 123_456_789_012_345_678n,
    signInsThrottled: () => 2,
  });
  const keyed = (name: string, leaseMs = 10_000) =>
    f.engine.acquire({ name, owner: live, protocol: 'keyed', client: '10.0.0.1:1', leaseMs, waitMs: 0, sliding: false });
  const session = (name: string) =>
    f.engine.acquire({ name, owner: live, protocol: 'session', client: '10.0.0.2:2', leaseMs: 10_000, waitMs: 0, sliding: true });
  const r = keyed('released');
  keyed('released');
  f.engine.release('released', r.token); // release
  const d = session('dropped');
  keyed('dropped');
  f.engine.end(d); // disconnect
  keyed('expired', 50);
  session('expired');
  f.tick(60); // expiry
  keyed('forced');
  keyed('forced');
  f.engine.forceRelease('forced'); // force-release
  session('waited-for');
  session('waited-for');
  keyed('waited-for');
  return { ...f, registry, setRole: (r: NodeRole) => (role = r) };
}

describe('/metrics', () => {
  it('passes promtool check metrics with no lint findings', async () => {
    const { registry } = busyEngine();
    const { code, output } = await promtoolCheck(await registry.metrics());
    expect(output).toBe('');
    expect(code).toBe(0);
  });

  it('has a promtool check that does catch a lint finding (so a pass means something)', async () => {
    const { code, output } = await promtoolCheck('# HELP bad_total A gauge with a counter name\n# TYPE bad_total gauge\nbad_total 1\n');
    expect(code).not.toBe(0);
    expect(output).toMatch(/non-counter metrics should not have "_total" suffix/);
  });

  it('counts holders, waiters and live claims per protocol at scrape time', async () => {
    const { registry } = busyEngine();
    const text = await registry.metrics();
    // Holders: released (keyed), dropped (keyed), expired (session), forced (keyed), waited-for (session).
    expect(sample(text, 'baton_locks_held{protocol="keyed"}')).toBe(3);
    expect(sample(text, 'baton_locks_held{protocol="session"}')).toBe(2);
    expect(sample(text, 'baton_waiters{protocol="keyed"}')).toBe(1);
    expect(sample(text, 'baton_waiters{protocol="session"}')).toBe(1);
    expect(sample(text, 'baton_sessions{protocol="keyed"}')).toBe(4);
    expect(sample(text, 'baton_sessions{protocol="session"}')).toBe(3);
    expect(sample(text, 'baton_connections{protocol="keyed"}')).toBe(3);
    expect(sample(text, 'baton_connections{protocol="session"}')).toBe(2);
  });

  it('shows the node role as 1 for the current role and 0 for the other, read at each scrape', async () => {
    const { registry, setRole } = busyEngine();
    let text = await registry.metrics();
    expect(sample(text, 'baton_node_role{role="active"}')).toBe(1);
    expect(sample(text, 'baton_node_role{role="standby"}')).toBe(0);
    setRole('standby');
    text = await registry.metrics();
    expect(sample(text, 'baton_node_role{role="active"}')).toBe(0);
    expect(sample(text, 'baton_node_role{role="standby"}')).toBe(1);
  });

  it('shows node identity, the token high water mark and the grant counters', async () => {
    const { registry, engine } = busyEngine();
    const text = await registry.metrics();
    expect(sample(text, 'baton_node_info{node="node-a",instance_id="inst-1"}')).toBe(1);
    expect(sample(text, 'baton_console_event_streams')).toBe(4);
    expect(sample(text, 'baton_token_high_water')).toBe(Number(engine.tokenHighWater));
    expect(sample(text, 'baton_grants_total{protocol="keyed"}')).toBe(6);
    expect(sample(text, 'baton_grants_total{protocol="session"}')).toBe(3);
  });

  it('has the handover histogram for all four causes from the start, and counts each handover under its cause', async () => {
    const fresh = engineFixture();
    const empty = await createMetrics(fresh.engine, () => ({ keyed: 0, session: 0 }), { role: () => 'active', nodeId: 'n', instanceId: 'i' }).metrics();
    for (const cause of ['release', 'disconnect', 'expiry', 'force-release']) {
      expect(sample(empty, `baton_handover_latency_seconds_count{cause="${cause}"}`)).toBe(0);
      expect(sample(empty, `baton_handover_latency_seconds_bucket{le="+Inf",cause="${cause}"}`)).toBe(0);
    }
    const text = await busyEngine().registry.metrics();
    for (const cause of ['release', 'disconnect', 'force-release']) {
      expect(sample(text, `baton_handover_latency_seconds_count{cause="${cause}"}`)).toBe(1);
      // Same engine step: 0 s, inside the smallest bucket.
      expect(sample(text, `baton_handover_latency_seconds_bucket{le="0.00001",cause="${cause}"}`)).toBe(1);
    }
    // The lease ended at 1,050 and the timer ran at 1,060: 10 ms, above the 5 ms bound.
    expect(sample(text, 'baton_handover_latency_seconds_bucket{le="0.005",cause="expiry"}')).toBe(0);
    expect(sample(text, 'baton_handover_latency_seconds_bucket{le="0.01",cause="expiry"}')).toBe(1);
    expect(sample(text, 'baton_handover_latency_seconds_sum{cause="expiry"}')).toBeCloseTo(0.01, 9);
  });

  it('leaves out the nodejs_*_total gauges that promtool rejects, and keeps the other process defaults', async () => {
    const text = await busyEngine().registry.metrics();
    expect(text).not.toMatch(/^nodejs_active_(handles|requests|resources)_total/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
  });

  it('with a cluster: peers up or down, replication lag of standbys, failovers by cause, promtool-clean', async () => {
    const f = engineFixture();
    const peer = (id: string, priority: number, over: Partial<NodeView>): NodeView => ({
      id,
      role: 'standby',
      priority,
      self: false,
      alive: true,
      lastSeen: 0,
      replicationLag: null,
      inSync: true,
      yielded: false,
      lockAddress: '',
      sessionAddress: '',
      httpAddress: '',
      ...over,
    });
    let view: ClusterView = {
      self: 'a',
      instanceId: 'i',
      clustered: true,
      phase: 'active',
      active: 'a',
      restore: { available: false, yielded: [] },
      nodes: [peer('a', 0, { role: 'active', self: true }), peer('b', 1, { replicationLag: { events: 3, ms: 250 } }), peer('c', 2, { alive: false })],
      handoff: { available: true, reason: null, targets: ['b'] },
      failovers: [
        { at: 1, from: 'c', to: 'a', gapMs: 900, cause: 'crash' },
        { at: 2, from: 'a', to: 'b', gapMs: 40, cause: 'api-handoff' },
        { at: 3, from: 'b', to: 'a', gapMs: 30, cause: 'api-handoff' },
      ],
    };
    const registry = createMetrics(f.engine, () => ({ keyed: 0, session: 0 }), {
      role: () => 'active',
      nodeId: 'a',
      instanceId: 'i',
      cluster: () => view,
      clusterNode: {
        peerAuthRefusals: () => 4,
        failoversRecorded: () => ({ crash: 2, signal: 0, 'api-handoff': 1, 'priority-return': 0, 'split-brain': 0 }),
      },
    });
    const text = await registry.metrics();
    const { code, output } = await promtoolCheck(text);
    expect(output).toBe('');
    expect(code).toBe(0);
    expect(sample(text, 'baton_peer_up{node="a"}')).toBe(1);
    expect(sample(text, 'baton_peer_up{node="b"}')).toBe(1);
    expect(sample(text, 'baton_peer_up{node="c"}')).toBe(0);
    expect(sample(text, 'baton_replication_lag_events{node="b"}')).toBe(3);
    expect(sample(text, 'baton_replication_lag_seconds{node="b"}')).toBe(0.25);
    expect(sample(text, 'baton_replication_lag_events{node="a"}')).toBeUndefined();
    expect(sample(text, 'baton_failovers{cause="crash"}')).toBe(1);
    expect(sample(text, 'baton_failovers{cause="api-handoff"}')).toBe(2);
    expect(sample(text, 'baton_failovers{cause="split-brain"}')).toBe(0);
    expect(sample(text, 'baton_failovers{cause="priority-return"}')).toBe(0);
    // The active's view of its standbys: b in sync, c dead; itself not listed. Its own priority.
    expect(sample(text, 'baton_peer_in_sync{node="b"}')).toBe(1);
    expect(sample(text, 'baton_peer_in_sync{node="c"}')).toBe(0);
    expect(sample(text, 'baton_peer_in_sync{node="a"}')).toBeUndefined();
    expect(sample(text, 'baton_node_priority')).toBe(0);
    expect(sample(text, 'baton_peer_auth_refused_total')).toBe(4);
    expect(sample(text, 'baton_failovers_recorded_total{cause="crash"}')).toBe(2);
    expect(sample(text, 'baton_failovers_recorded_total{cause="api-handoff"}')).toBe(1);
    expect(sample(text, 'baton_failovers_recorded_total{cause="split-brain"}')).toBe(0);
    // b was promoted and its lag series goes away; a node that left the view goes too.
    view = { ...view, nodes: [peer('a', 0, { replicationLag: { events: 0, ms: 0 } }), peer('b', 1, { role: 'active' })] };
    const after = await registry.metrics();
    expect(sample(after, 'baton_replication_lag_events{node="b"}')).toBeUndefined();
    expect(sample(after, 'baton_replication_lag_events{node="a"}')).toBe(0);
    expect(sample(after, 'baton_peer_up{node="c"}')).toBeUndefined();
    // A standby exports no in-sync series (only the active knows who is in sync with it).
    view = { ...view, phase: 'standby', active: 'b' };
    expect(await registry.metrics()).not.toMatch(/^baton_peer_in_sync/m);
  });

  it('exports no cluster series without a cluster function', async () => {
    const text = await busyEngine().registry.metrics();
    expect(text).not.toMatch(/^baton_(peer_up|replication_lag|failovers)/m);
  });
});
