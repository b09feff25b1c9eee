import { describe, expect, it } from 'vitest';
import { apiRequest, READ_TOKEN, SINGLE_NODE_REASON, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getAudit, getCluster, getStats } from './overview.ts';

describe('GET /api/v1/cluster', () => {
  it('shows this node as the single active node', async () => {
    const { daemon } = await testFacade();
    const res = getCluster(apiRequest('/api/v1/cluster'), daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      self: 'local',
      nodes: [{ id: 'local', role: 'active', self: true }],
      handoff: { available: false, reason: SINGLE_NODE_REASON },
    });
  });

  it('needs a token when reads are closed', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect(getCluster(apiRequest('/api/v1/cluster'), daemon).status).toBe(401);
  });
});

describe('GET /api/v1/stats', () => {
  it('counts locks, holders and waiters', async () => {
    const t = await testFacade();
    t.hold('a');
    t.hold('a');
    t.hold('b');
    expect(await getStats(apiRequest('/api/v1/stats'), t.daemon).json()).toMatchObject({ locks: 2, held: 2, waiters: 1, state: 'serving' });
  });

  it('needs a token when reads are closed', async () => {
    const { daemon } = await testFacade({ host: '0.0.0.0' });
    expect(getStats(apiRequest('/api/v1/stats'), daemon).status).toBe(401);
  });
});

describe('GET /api/v1/audit', () => {
  function fill(t: Awaited<ReturnType<typeof testFacade>>, count: number): void {
    for (let i = 1; i <= count; i++) t.audit.record({ who: 'bearer:admin', action: 'kick', target: `l${i}`, result: 'ok', detail: null });
  }

  it('returns the last 200 entries by default, newest last', async () => {
    const t = await testFacade();
    fill(t, 250);
    const { entries } = (await getAudit(apiRequest('/api/v1/audit'), t.daemon).json()) as { entries: Array<{ target: string }> };
    expect(entries).toHaveLength(200);
    expect(entries[0]?.target).toBe('l51');
    expect(entries[199]?.target).toBe('l250');
  });

  it('returns as many as the limit asks', async () => {
    const t = await testFacade();
    fill(t, 5);
    const { entries } = (await getAudit(apiRequest('/api/v1/audit?limit=2'), t.daemon).json()) as { entries: unknown[] };
    expect(entries).toHaveLength(2);
  });

  it('refuses a limit over 1000 with 422 naming the field', async () => {
    const { daemon } = await testFacade();
    const res = getAudit(apiRequest('/api/v1/audit?limit=1001'), daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining('limit') } });
  });

  it('needs a token when reads are closed', async () => {
    const { daemon } = await testFacade({ readToken: READ_TOKEN });
    expect(getAudit(apiRequest('/api/v1/audit'), daemon).status).toBe(401);
  });
});
