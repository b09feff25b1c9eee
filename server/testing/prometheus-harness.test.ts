// The Prometheus harness against a real Baton node: it scrapes it, answers queries with its
// series, refuses a bad expression with Prometheus's own error, and evaluates a rule file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster, waitFor } from './cluster-harness.ts';
import { type PrometheusServer, startPrometheus } from './prometheus-harness.ts';

describe('prometheus harness', () => {
  let cluster: Cluster;
  let prometheus: PrometheusServer;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 1 });
    const rules = join(cluster.dir, 'test-rules.yml');
    writeFileSync(
      rules,
      [
        'groups:',
        '  - name: harness',
        '    rules:',
        '      - alert: HarnessNodeUp',
        '        expr: baton_node_info == 1',
        '      - alert: HarnessNever',
        '        expr: baton_node_info == 42',
        '',
      ].join('\n'),
    );
    prometheus = await startPrometheus({ targets: [cluster.node('a').httpAddress], rulesFiles: [rules] });
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    await cluster?.close();
  });

  it('scrapes the node and answers queries with its series', async () => {
    await prometheus.waitForTargetsUp();
    const info = await waitFor(async () => {
      const samples = await prometheus.query('baton_node_info');
      return samples.length > 0 ? samples : null;
    });
    expect(info).toHaveLength(1);
    expect(info[0]?.metric.node).toBe('a');
    expect(info[0]?.value).toBe(1);
  });

  it('throws with the reason when an expression does not parse', async () => {
    await expect(prometheus.query('sum(rate(baton_grants_total[1m])')).rejects.toThrow(/bad_data/);
  });

  it('evaluates the rule files it was given: a true rule fires, a false one stays silent', async () => {
    const alerts = await waitFor(async () => {
      const now = await prometheus.alerts();
      return now.some((a) => a.name === 'HarnessNodeUp' && a.state === 'firing') ? now : null;
    });
    expect(alerts.map((a) => a.name)).not.toContain('HarnessNever');
  });
});
