import { describe, expect, it } from 'vitest';
import { apiRequest, asReader, METRICS_TEXT, METRICS_TYPE, READ_TOKEN, testFacade } from '../ops/testing/test-facade.ts';
import { getMetrics, getReadyz } from './probes.ts';

describe('GET /readyz', () => {
  it('is ready while serving', async () => {
    const { daemon } = await testFacade();
    const res = getReadyz(apiRequest('/readyz'), daemon);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ready: true, state: 'serving', role: 'active' });
  });

  it('is not ready while draining', async () => {
    const t = await testFacade();
    t.setState('draining');
    const res = getReadyz(apiRequest('/readyz'), t.daemon);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ready: false, state: 'draining', role: 'active' });
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
