import { describe, expect, it } from 'vitest';
import { apiRequest, asReader, METRICS_TEXT, METRICS_TYPE, READ_TOKEN, testFacade } from '../ops-facade/testing/test-facade.ts';
import type { ClusterView, CoordinationView, NodePhase, NodeRole } from '../../lib/ops-api/api-types.ts';
import { coordinationView } from '../../lib/ops-api/testing/coordination-fixture.ts';
import { getHealthz, getMetrics, getReadyz } from './probes.ts';

describe('GET /readyz', () => {
  it('is ready while serving', async () => {
    const { daemon } = await testFacade();
    const res = getReadyz(apiRequest('/readyz'), daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ready: true, state: 'serving', role: 'active', phase: 'active', grants: 'ok' });
  });

  it('is not ready while draining', async () => {
    const t = await testFacade();
    t.setState('draining');
    const res = getReadyz(apiRequest('/readyz'), t.daemon);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ready: false, state: 'draining', role: 'active', phase: 'active', grants: 'ok' });
  });

  it('is not ready while starting', async () => {
    const t = await testFacade();
    t.setState('starting');
    expect(getReadyz(apiRequest('/readyz'), t.daemon).status).toBe(503);
  });

  it('needs no credentials even when reads do', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect(getReadyz(apiRequest('/readyz'), daemon).status).toBe(200);
  });
});

/** A clustered node in `phase` with `role`, for the probes. */
async function node(role: NodeRole, phase: NodePhase) {
  const base = await testFacade();
  const cluster = (): ClusterView => ({ ...base.daemon.cluster(), clustered: true, phase });
  return testFacade({ role: () => role, cluster });
}

describe('GET /readyz in a cluster', () => {
  it('is ready on a synced standby and on the active node', async () => {
    expect(getReadyz(apiRequest('/readyz'), (await node('standby', 'standby')).daemon).status).toBe(200);
    expect(getReadyz(apiRequest('/readyz'), (await node('active', 'active')).daemon).status).toBe(200);
  });

  it('is not ready while discovering, syncing, promoting or handing off', async () => {
    for (const [role, phase] of [
      ['standby', 'discovering'],
      ['standby', 'syncing'],
      ['standby', 'promoting'],
      ['active', 'handing-off'],
    ] as const) {
      const res = getReadyz(apiRequest('/readyz'), (await node(role, phase)).daemon);
      expect(res.status, phase).toBe(503);
      expect(await res.json()).toEqual({ ready: false, state: 'serving', role, phase, grants: 'ok' });
    }
  });

  it('with ?role=active is ready only on the active node', async () => {
    const active = await node('active', 'active');
    const standby = await node('standby', 'standby');
    expect(getReadyz(apiRequest('/readyz?role=active'), active.daemon).status).toBe(200);
    const res = getReadyz(apiRequest('/readyz?role=active'), standby.daemon);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ready: false, state: 'serving', role: 'standby', phase: 'standby', grants: 'ok' });
    expect(getReadyz(apiRequest('/readyz?role=standby'), standby.daemon).status).toBe(200);
    expect(getReadyz(apiRequest('/readyz?role=standby'), active.daemon).status).toBe(503);
  });

  it('answers 422 for a role it does not know', async () => {
    const { daemon } = await testFacade();
    const res = getReadyz(apiRequest('/readyz?role=leader'), daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining('role') } });
  });
});

/** A clustered node in the etcd mode, in `phase` with `role`, whose view says `coordination`. */
async function etcdNode(role: NodeRole, phase: NodePhase, coordination: CoordinationView) {
  const base = await testFacade();
  const cluster = (): ClusterView => ({ ...base.daemon.cluster(), clustered: true, phase, coordination });
  return testFacade({ role: () => role, cluster });
}

describe('GET /readyz in the etcd mode', () => {
  it('is ready on an active that may grant, and on a standby', async () => {
    expect(getReadyz(apiRequest('/readyz'), (await etcdNode('active', 'active', coordinationView())).daemon).status).toBe(200);
    const standby = coordinationView({ holding: false, holder: 'a', lease: { id: null, ttlMs: 2_000, grantRemainingMs: null } });
    expect(getReadyz(apiRequest('/readyz?role=standby'), (await etcdNode('standby', 'standby', standby)).daemon).status).toBe(200);
  });

  it('answers 503 with the reason on an active that cannot grant', async () => {
    const blocked = 'etcd quorum lost: no keep-alive answered for 1.9 s; grants stopped until etcd answers';
    const t = await etcdNode('active', 'active', coordinationView({ blocked, lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: 0 } }));
    for (const path of ['/readyz', '/readyz?role=active']) {
      const res = getReadyz(apiRequest(path), t.daemon);
      expect(res.status, path).toBe(503);
      expect(await res.json()).toEqual({ ready: false, state: 'serving', role: 'active', phase: 'active', grants: 'ok', reason: blocked });
    }
  });
});

describe('GET /healthz', () => {
  it('names the role and the phase, and stays 200 while the node is not ready', async () => {
    const t = await node('standby', 'syncing');
    const res = getHealthz(apiRequest('/healthz'), t.daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', state: 'serving', instanceId: 'test-instance', role: 'standby', phase: 'syncing' });
  });
});

describe('GET /metrics', () => {
  it('answers the metrics text with its own content type', async () => {
    const { daemon } = await testFacade();
    const res = await getMetrics(apiRequest('/metrics'), daemon);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(METRICS_TYPE);
    expect(await res.text()).toBe(METRICS_TEXT);
  });

  it('refuses an anonymous scrape when reads need a token', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect((await getMetrics(apiRequest('/metrics'), daemon)).status).toBe(401);
  });

  it('lets a scrape with the read token through', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect((await getMetrics(apiRequest('/metrics', { headers: asReader }), daemon)).status).toBe(200);
  });
});

describe('GET /readyz and the cluster peers’ consoles (CORS)', () => {
  /** A node whose cluster view lists b (this node) and a peer a at 127.0.0.1:3001. */
  async function clustered() {
    const base = await testFacade();
    const view = base.daemon.cluster();
    const self = view.nodes[0];
    if (self === undefined) throw new Error('no self node');
    const peer = { ...self, id: 'a', self: false, httpAddress: '127.0.0.1:3001' };
    const cluster = (): ClusterView => ({ ...view, clustered: true, nodes: [peer, { ...self, id: 'b' }] });
    return testFacade({ cluster });
  }
  const probe = (origin?: string) => apiRequest('/readyz?role=active', origin === undefined ? {} : { headers: { origin } });

  it('lets a peer console’s page read the answer, naming that origin alone and no credentials', async () => {
    const { daemon } = await clustered();
    const res = getReadyz(probe('http://127.0.0.1:3001'), daemon);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:3001');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toBe('origin');
  });

  it('answers no CORS header to any other origin, nor without one', async () => {
    const { daemon } = await clustered();
    expect(getReadyz(probe('https://evil.example'), daemon).headers.get('access-control-allow-origin')).toBeNull();
    expect(getReadyz(probe('http://127.0.0.1:30011'), daemon).headers.get('access-control-allow-origin')).toBeNull();
    expect(getReadyz(probe(), daemon).headers.get('access-control-allow-origin')).toBeNull();
  });
});
